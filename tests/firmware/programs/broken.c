/* Does not compile: for the failing-build test. */
int main(void) { return undeclared_variable; }
