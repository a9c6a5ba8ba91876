.data
.space -16
