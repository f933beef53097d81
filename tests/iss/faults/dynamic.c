/* Linked dynamically: the ISS only loads static programs. */
#include <stdio.h>
int main(void) { return puts("dynamic"); }
