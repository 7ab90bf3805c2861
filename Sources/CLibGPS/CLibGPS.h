// The system libgps, found through pkg-config. Only the CGPS C target includes this.
#include <gps.h>
