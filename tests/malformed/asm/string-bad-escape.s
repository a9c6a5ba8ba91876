.data
.ascii "\q"
