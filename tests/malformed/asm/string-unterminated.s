.data
.ascii "abc
