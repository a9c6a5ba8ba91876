/* placeholder replaced by the CLI */
#include <stdio.h>
int main(void) { puts("npusim"); return 0; }
