// The program's arguments as glibc hands them to the executable's constructors.
//
// Swift's runtime finds the arguments of a process on Linux through /proc (it looks for the
// initial stack in /proc/self/maps); where /proc is not mounted (a chroot building an image,
// before its first boot) it finds none, and a command-line tool would run as if it had been
// given no arguments. glibc calls each function of
// the executable's .init_array with (argc, argv, envp) before main: arguments.c keeps them.
#ifndef CPROGRAMARGUMENTS_H
#define CPROGRAMARGUMENTS_H

/// The argument count glibc passed, or -1 when the constructor did not run.
int CProgramArguments_count(void);

/// Argument `index` (0 is the program's name), or NULL outside 0..<count.
const char *CProgramArguments_argument(int index);

#endif
