.include "include-self.s"
