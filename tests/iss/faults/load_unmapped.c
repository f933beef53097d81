/* Reads an unmapped address. */
int main(void) { return *(volatile int*)0x0badc0de; }
