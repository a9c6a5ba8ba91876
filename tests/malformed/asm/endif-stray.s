.endif
