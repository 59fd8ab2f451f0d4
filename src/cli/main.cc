// tablemere: the command-line client. For now it reports its version; the CLI issue
// fills in the commands (it talks to the server only through the public HTTP API).
#include <cstdio>
#include <cstring>

int main(int argc, char** argv) {
  if (argc > 1 &&
      (std::strcmp(argv[1], "--version") == 0 || std::strcmp(argv[1], "version") == 0)) {
    std::printf("tablemere %s\n", TABLEMERE_VERSION);
    return 0;
  }
  std::printf("tablemere %s\nThe command set arrives with the CLI issue; try --version.\n",
              TABLEMERE_VERSION);
  return argc > 1 ? 6 : 0;
}
