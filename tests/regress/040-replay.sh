#!/bin/sh
. "$(dirname "$0")/lib.sh"
skip_all "not yet"
