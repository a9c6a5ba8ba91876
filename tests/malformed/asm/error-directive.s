.error "stop"
