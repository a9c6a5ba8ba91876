.include "no/such/file.inc"
