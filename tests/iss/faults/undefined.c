/* Executes a permanently undefined encoding (UDF #0x1234 in A32). */
int main(void) {
  __asm__ volatile(".arm\n.word 0xe7f123f4\n");
  return 0;
}
