#: recurrent
STATE = None  # decoding: each layer's state under its number, carried from one call of forward to the next (None: the ids run as one sequence)


#.
#: recurrent
def state_of(b):
    # Layer b's share of the decoding state, a dict its mixers read their state from and write
    # it back to (a fresh one, thrown away, when the ids run as one sequence)
    return {} if STATE is None else STATE.setdefault(b, {})


#.
