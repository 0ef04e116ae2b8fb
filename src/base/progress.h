/* Progress of long runs on stderr: a line every few seconds with the share done and an
   estimate of the time left; silent for runs that end within the first interval. */
#ifndef FP2_PROGRESS_H
#define FP2_PROGRESS_H

typedef struct progress {
  const char *what;
  double total, done;
  double start_ms, last_ms;
} progress;

void progress_begin(progress *p, const char *what, double total);
void progress_add(progress *p, double amount); /* thread-safe */
void progress_end(progress *p);

#endif
