/*
 * gateway/privdrop.h — moved to common/privdrop.h (the deid worker of the
 * CLI drops privileges too); kept so gateway code includes it unchanged.
 */
#include "common/privdrop.h"
