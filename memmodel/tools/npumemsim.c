/* npumemsim — the memsim driver as its own program, so it can run before
 * (and independently of) the npusim CLI dispatching `npusim memsim`. */
#include "memmodel/mem.h"

int main(int argc, char **argv) { return mem_cmd_memsim(argc, argv); }
