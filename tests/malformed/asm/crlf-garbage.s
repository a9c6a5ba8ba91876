main:
	frob
