.include "/"
