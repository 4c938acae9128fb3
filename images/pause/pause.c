/* The pod sandbox's "pause" process: holds the pod's namespaces, reaps zombies
   (it is PID 1 when the pod shares its PID namespace) and exits on SIGINT/SIGTERM.
   Same behaviour as Kubernetes' build/pause/linux/pause.c, written for kubeload. */
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static void on_term(int sig) {
  (void)sig;
  _exit(0);
}

static void on_child(int sig) {
  (void)sig;
  while (waitpid(-1, NULL, WNOHANG) > 0) {
  }
}

int main(int argc, char **argv) {
  if (argc > 1 && strcmp(argv[1], "-v") == 0) {
    puts("kubeload-pause 1");
    return 0;
  }
  if (getpid() != 1) fprintf(stderr, "pause: warning: not PID 1\n");
  struct sigaction sa;
  memset(&sa, 0, sizeof sa);
  sa.sa_handler = on_term;
  if (sigaction(SIGINT, &sa, NULL) < 0 || sigaction(SIGTERM, &sa, NULL) < 0) return 1;
  sa.sa_handler = on_child;
  sa.sa_flags = SA_NOCLDSTOP;
  if (sigaction(SIGCHLD, &sa, NULL) < 0) return 2;
  for (;;) pause();
  return 42;
}
