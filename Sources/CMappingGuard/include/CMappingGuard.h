// Read-only file mappings that survive their file shrinking under them.
//
// A page of a MAP_SHARED file mapping that lies past the file's end raises SIGBUS when it is
// read: whoever can write the file (a `cp` over it, a `truncate`) kills every process that has it
// mapped, at its next read there. A mapping registered here is guarded instead: the SIGBUS handler
// maps an anonymous zero page over the page that faulted, marks the mapping damaged and returns,
// so the read that faulted goes on and sees zeros (a reader that bounds-checks every read gives a
// wrong answer, not a crash), and the caller asks `damaged` after its reads and discards what
// they gave. A SIGBUS at any other address, or one sent by kill(), goes to the handler that was
// installed before this one, or to the default action (or stays ignored, when it was and kill()
// sent it). The handler calls only mmap (a system call), sigaction and raise, and never unwinds.
#ifndef CMAPPINGGUARD_H
#define CMAPPINGGUARD_H

#include <stdbool.h>
#include <stddef.h>

/// How many mappings one process can have guarded at once.
#define CMAPPINGGUARD_CAPACITY 64

/// Guards [start, start + length) and returns its slot, or -1 when every slot is taken or the
/// handler could not be installed (errno says why). Installs the handler the first time, and
/// again when another handler has taken its place since.
int CMappingGuard_register(const void *start, size_t length);

/// Stops guarding the slot's mapping: call before munmap.
void CMappingGuard_unregister(int slot);

/// Whether a read of the slot's mapping has faulted past the file's end since it was registered.
bool CMappingGuard_damaged(int slot);

#endif
