/* Never returns: for the time-limit tests. */
int main(void) {
  volatile unsigned n = 0;
  for (;;) {
    ++n;
  }
}
