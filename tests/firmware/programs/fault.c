/* Reads from an address no machine maps: a bus fault escalated to HardFault on Cortex-M. */
#include <stdint.h>

int main(void) {
  volatile uint32_t *nowhere = (volatile uint32_t *)0xF0000000u;
  return (int)*nowhere;
}
