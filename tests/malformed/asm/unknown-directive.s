.frob 1
