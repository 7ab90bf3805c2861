// The system libyaml, found through pkg-config. Only the CYAML C target includes this.
#include <yaml.h>
