fn main() {
    let src = std::env::args().nth(1).unwrap();
    let t = anatomy_exec::chat::Template { source: src, bos: String::new(), eos: String::new(), file: "x".into() };
    let r = t.render("hi");
    let hwm = std::fs::read_to_string("/proc/self/status").unwrap().lines().find(|l| l.starts_with("VmHWM")).unwrap().to_string();
    match r { Ok(s) => println!("ok len {} {hwm}", s.len()), Err(e) => println!("err {} {hwm}", e.message.chars().take(150).collect::<String>()) }
}
