/*
 * deid/deid.h — the de-identification engine in one include.
 *
 * The engine is a library (libdeid.a): it never logs and never exits;
 * every fallible call returns a status from deid/error.h with file:line
 * detail for input errors.  The pipeline, one file per step:
 *
 *   csv.c, hierarchy.c   parse untrusted input through common/buf.h
 *   dataset.c            dictionary-encode columns, bind QIs to hierarchies
 *   groupify.c           bottom classes, grouping and roll-up of a node
 *   poptable.c           the journalist's population table, counted per class
 *   lattice.c            node numbering and the bound-ordered visit list
 *   suppress.c           k-anonymity and PU <= t by binary search
 *   quality.c            Loss and non-uniform entropy, the search bound
 *   search.c             the globally optimal search on several threads
 *   pitman.c zayatz.c snb.c dankar.c hist.c   population-uniqueness models
 *   summary.c report.c   risk figures and the JSON reports
 *   output.c             atomic writes of the released table and reports
 *   verify.c             the release's figures re-derived from its bytes
 *   anonymize.c          the gate: load, search, write, verify, decide
 *   synth.c              the synthetic demo dataset
 */
#ifndef DEID_DEID_H
#define DEID_DEID_H

#include "deid/error.h"
#include "deid/csv.h"
#include "deid/hierarchy.h"
#include "deid/dataset.h"
#include "deid/risk.h"
#include "deid/groupify.h"
#include "deid/poptable.h"
#include "deid/lattice.h"
#include "deid/quality.h"
#include "deid/suppress.h"
#include "deid/search.h"
#include "deid/summary.h"
#include "deid/report.h"
#include "deid/output.h"
#include "deid/verify.h"
#include "deid/anonymize.h"
#include "deid/synth.h"

#endif
