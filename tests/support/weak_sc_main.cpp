// libsystemc.so carries its own main(), which calls sc_main(). Test programs that bring their own
// main() never call it, but some linkers (e.g. with sanitizers) still want the reference resolved.
// This weak definition satisfies them; a test's real sc_main overrides it.
extern "C" __attribute__((weak)) int sc_main(int, char**) { return 1; }
