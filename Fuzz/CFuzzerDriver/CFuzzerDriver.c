// The declaration in include/CFuzzerDriver.h is the whole module; SwiftPM wants a source file.
#include "CFuzzerDriver.h"
