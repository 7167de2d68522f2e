/*
 * deid/synth.c — generate the synthetic demo dataset and its hierarchies.
 *
 * Trusted code; reads no input, writes files only into the directory it
 * is given.  One record is one fictional hospital admission: the date is
 * drawn first (weekday and winter effects), then age (newborn peak, rising
 * with age), sex given age, ZIP (six East Bay/SF 3-digit areas, skewed),
 * race given the ZIP area, a diagnosis given age, sex and season, a length
 * of stay given the diagnosis, and a name given the sex.  Only integer
 * arithmetic and our own xoshiro256** generator are used, so a seed gives
 * the same bytes everywhere.  Every file is written to a temporary file in
 * the target directory, fsync'd and renamed into place.
 */
#include "config.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "common/rng.h"
#include "deid/synth.h"

#define nitems(a)	(sizeof(a) / sizeof((a)[0]))

/* ---- column names (exported for the CLI) ---- */

const char *const deid_synth_columns[] = {
	"patient_id", "name", "age", "sex", "zip", "race", "admission_date",
	"diagnosis", "length_of_stay", NULL
};
const char *const deid_synth_identifying[] = { "patient_id", "name", NULL };
const char *const deid_synth_qis[] = {
	"age", "sex", "zip", "race", "admission_date", NULL
};
const char *const deid_synth_sensitive[] = { "diagnosis", NULL };
const char *const deid_synth_insensitive[] = { "length_of_stay", NULL };

/* ---- fixed domains ---- */

#define AGE_MAX		99
#define NAGES		(AGE_MAX + 1)
#define DATE_YEAR0	2022
#define DATE_NYEARS	2
#define MAX_DAYS	(DATE_NYEARS * 366)
#define ZIPS_PER_AREA	50
#define NRACES		8
#define LOS_MAX		90

/* 3-digit ZIP areas around one hospital, with their share of patients. */
static const struct zip_area {
	const char	*prefix;
	uint32_t	 weight;
	uint16_t	 race[NRACES];	/* per mille, order of races[] */
} zip_areas[] = {
	{ "946", 30, { 300, 280, 200, 10, 8, 60, 112, 30 } },	/* Oakland */
	{ "945", 25, { 450, 120, 250, 12, 6, 60, 72, 30 } },	/* East Bay */
	{ "947", 15, { 480, 110, 250, 5, 5, 70, 50, 30 } },	/* Berkeley */
	{ "941", 12, { 420, 50, 350, 5, 4, 60, 81, 30 } },	/* San Francisco */
	{ "948", 10, { 300, 250, 180, 12, 8, 60, 160, 30 } },	/* Richmond */
	{ "940",  8, { 520, 30, 300, 15, 4, 50, 51, 30 } },	/* Peninsula */
};
#define NZIPS		(nitems(zip_areas) * ZIPS_PER_AREA)

/* Race categories and the coarser group they generalize to. */
static const struct race {
	const char	*name;
	const char	*group;
} races[NRACES] = {
	{ "White", "White" },
	{ "Black or African American", "Black" },
	{ "Asian", "Asian or Pacific Islander" },
	{ "Native Hawaiian or Other Pacific Islander",
	    "Asian or Pacific Islander" },
	{ "American Indian or Alaska Native", "Other or multiple" },
	{ "Two or more races", "Other or multiple" },
	{ "Other", "Other or multiple" },
	{ "Unknown", "Unknown" },
};

/* Age bands used by sex ratios and diagnosis curves. */
enum { BAND_NEWBORN, BAND_CHILD, BAND_YOUNG, BAND_MIDDLE, BAND_OLD,
    BAND_ELDERLY, NBANDS };

/* Share of female patients per age band, per mille (births in BAND_YOUNG). */
static const uint32_t female_permille[NBANDS] = { 488, 460, 620, 500, 530,
    620 };

/* How a diagnosis' frequency changes with age band. */
enum { C_FLAT, C_OLD, C_MID, C_YOUNG, C_NEWBORN, C_ADULT, C_ELDERLY,
    C_BIRTH, C_USHAPE, C_CHILD, C_SEPSIS, NCURVES };
static const uint8_t curves[NCURVES][NBANDS] = {
	[C_FLAT] =	{ 10, 10, 10, 10, 10, 10 },
	[C_OLD] =	{ 0, 0, 2, 8, 15, 20 },
	[C_MID] =	{ 0, 1, 10, 14, 8, 4 },
	[C_YOUNG] =	{ 20, 16, 6, 2, 1, 1 },
	[C_NEWBORN] =	{ 100, 0, 0, 0, 0, 0 },
	[C_ADULT] =	{ 0, 2, 12, 10, 6, 3 },
	[C_ELDERLY] =	{ 0, 0, 0, 4, 14, 30 },
	[C_BIRTH] =	{ 0, 0, 30, 1, 0, 0 },
	[C_USHAPE] =	{ 8, 6, 3, 5, 10, 16 },
	[C_CHILD] =	{ 2, 12, 4, 3, 2, 1 },
	[C_SEPSIS] =	{ 6, 2, 2, 6, 12, 18 },
};

/* Diagnoses (sensitive): ICD-10 category and label, who gets them, stay. */
static const struct diag {
	const char	*text;
	uint8_t		 minage, maxage;
	uint8_t		 sexw[2];	/* multiplier for F, M */
	uint8_t		 curve;
	uint8_t		 winter;	/* doubled in Dec-Feb */
	uint16_t	 weight;
	uint16_t	 los10;		/* mean stay in tenths of days */
} diags[] = {
	{ "Z38 Liveborn infants according to place of birth and type of "
	    "delivery", 0, 0, { 10, 10 }, C_NEWBORN, 0, 60, 25 },
	{ "P07 Disorders of newborn related to short gestation and low "
	    "birth weight", 0, 0, { 10, 11 }, C_NEWBORN, 0, 8, 150 },
	{ "O80 Encounter for full-term uncomplicated delivery", 15, 49,
	    { 10, 0 }, C_BIRTH, 0, 70, 22 },
	{ "O82 Encounter for cesarean delivery without indication", 15, 49,
	    { 10, 0 }, C_BIRTH, 0, 25, 31 },
	{ "J18 Pneumonia, unspecified organism", 0, 99, { 10, 11 },
	    C_USHAPE, 1, 30, 52 },
	{ "J21 Acute bronchiolitis", 0, 4, { 9, 11 }, C_YOUNG, 1, 20, 30 },
	{ "J45 Asthma", 2, 99, { 10, 10 }, C_CHILD, 0, 10, 25 },
	{ "J44 Other chronic obstructive pulmonary disease", 40, 99,
	    { 10, 11 }, C_OLD, 1, 20, 48 },
	{ "U07 COVID-19", 0, 99, { 10, 12 }, C_OLD, 1, 15, 70 },
	{ "I21 Acute myocardial infarction", 30, 99, { 10, 18 }, C_OLD, 0,
	    20, 45 },
	{ "I48 Atrial fibrillation and flutter", 30, 99, { 10, 12 }, C_OLD,
	    0, 15, 35 },
	{ "I50 Heart failure", 30, 99, { 10, 11 }, C_ELDERLY, 1, 25, 55 },
	{ "I63 Cerebral infarction", 30, 99, { 10, 11 }, C_ELDERLY, 0, 18,
	    60 },
	{ "I10 Essential (primary) hypertension", 20, 99, { 10, 10 }, C_OLD,
	    0, 6, 25 },
	{ "E11 Type 2 diabetes mellitus", 15, 99, { 10, 11 }, C_OLD, 0, 12,
	    45 },
	{ "E10 Type 1 diabetes mellitus", 1, 99, { 10, 10 }, C_CHILD, 0, 5,
	    30 },
	{ "N39 Other disorders of urinary system", 0, 99, { 16, 8 },
	    C_ELDERLY, 0, 18, 40 },
	{ "N18 Chronic kidney disease", 20, 99, { 10, 12 }, C_OLD, 0, 8, 50 },
	{ "A41 Other sepsis", 0, 99, { 10, 11 }, C_SEPSIS, 0, 25, 80 },
	{ "K35 Acute appendicitis", 3, 90, { 9, 11 }, C_MID, 0, 15, 25 },
	{ "K80 Cholelithiasis", 15, 99, { 16, 8 }, C_MID, 0, 15, 30 },
	{ "K57 Diverticular disease of intestine", 30, 99, { 11, 10 }, C_OLD,
	    0, 10, 42 },
	{ "S72 Fracture of femur", 0, 99, { 16, 7 }, C_ELDERLY, 0, 18, 70 },
	{ "S06 Intracranial injury", 0, 99, { 7, 13 }, C_FLAT, 0, 6, 45 },
	{ "F32 Depressive episode", 10, 99, { 14, 8 }, C_ADULT, 0, 10, 100 },
	{ "F20 Schizophrenia", 15, 99, { 7, 12 }, C_ADULT, 0, 6, 150 },
	{ "F10 Alcohol related disorders", 15, 99, { 5, 14 }, C_ADULT, 0, 10,
	    40 },
	{ "C34 Malignant neoplasm of bronchus and lung", 30, 99, { 10, 12 },
	    C_OLD, 0, 8, 70 },
	{ "C50 Malignant neoplasm of breast", 25, 99, { 10, 0 }, C_OLD, 0, 6,
	    25 },
	{ "C61 Malignant neoplasm of prostate", 40, 99, { 0, 10 }, C_OLD, 0,
	    5, 25 },
	{ "M17 Osteoarthritis of knee", 40, 99, { 12, 9 }, C_OLD, 0, 12, 28 },
	{ "G40 Epilepsy and recurrent seizures", 0, 99, { 10, 11 }, C_FLAT,
	    0, 6, 35 },
	{ "R07 Pain in throat and chest", 15, 99, { 10, 11 }, C_MID, 0, 12,
	    15 },
	{ "E86 Volume depletion", 0, 99, { 11, 10 }, C_USHAPE, 0, 8, 30 },
	{ "F03 Unspecified dementia", 60, 99, { 13, 10 }, C_ELDERLY, 0, 5,
	    120 },
	{ "T81 Complications of procedures, not elsewhere classified", 0, 99,
	    { 10, 10 }, C_OLD, 0, 6, 60 },
};

static const char *const first_names[2][24] = {
	{ "Mary", "Patricia", "Jennifer", "Linda", "Elizabeth", "Susan",
	  "Jessica", "Sarah", "Karen", "Lisa", "Nancy", "Maria", "Sandra",
	  "Ashley", "Emily", "Michelle", "Ana", "Mei", "Priya", "Aisha",
	  "Sofia", "Grace", "Olivia", "Hannah" },
	{ "James", "Robert", "John", "Michael", "David", "William",
	  "Richard", "Joseph", "Thomas", "Charles", "Daniel", "Matthew",
	  "Anthony", "Mark", "Jose", "Luis", "Wei", "Raj", "Omar", "Kwame",
	  "Ethan", "Noah", "Samuel", "Andrew" },
};

static const char *const last_names[] = {
	"Smith", "Johnson", "Williams", "Brown", "Jones", "Garcia", "Miller",
	"Davis", "Rodriguez", "Martinez", "Hernandez", "Lopez", "Gonzalez",
	"Wilson", "Anderson", "Thomas", "Taylor", "Moore", "Jackson", "Martin",
	"Lee", "Perez", "Thompson", "White", "Harris", "Sanchez", "Clark",
	"Ramirez", "Lewis", "Robinson", "Walker", "Young", "Allen", "King",
	"Wright", "Nguyen", "Tran", "Chen", "Wong", "Kim", "Patel", "Singh",
	"O'Brien", "Okafor", "Hill", "Flores", "Green", "Adams",
};

/* Cumulative weights and rendered domains, built once per call. */
struct synth_tables {
	size_t		 ndays;
	char		 date[MAX_DAYS][16];	/* "YYYY-MM-DD" */
	uint8_t		 month[MAX_DAYS];	/* 1..12 */
	uint32_t	 day_cum[MAX_DAYS];
	uint32_t	 age_cum[NAGES];
	char		 zip[NZIPS][6];
	uint32_t	 zip_cum[NZIPS];
	uint32_t	 race_cum[nitems(zip_areas)][NRACES];
};

/* ---- domain tables ---- */

static int
is_leap(unsigned y)
{
	return (y % 4 == 0 && y % 100 != 0) || y % 400 == 0;
}

/* Admissions per day: fewer at weekends, more in winter. */
static uint32_t
day_weight(size_t day, unsigned month, unsigned weekday0)
{
	static const uint32_t by_month[12] = { 115, 110, 105, 100, 95, 92, 92,
	    95, 98, 100, 105, 112 };
	unsigned wd = (unsigned)((day + weekday0) % 7);	/* 0 = Monday */

	return by_month[month - 1] * (wd == 5 ? 70 : wd == 6 ? 65 : 100);
}

/* Every calendar day of the range, rendered, with its draw weight. */
static void
build_dates(struct synth_tables *t)
{
	static const unsigned mdays[12] = { 31, 28, 31, 30, 31, 30, 31, 31,
	    30, 31, 30, 31 };
	unsigned y, m, d, n;
	uint32_t cum = 0;
	size_t day = 0;

	for (y = DATE_YEAR0; y < DATE_YEAR0 + DATE_NYEARS; y++)
		for (m = 1; m <= 12; m++) {
			n = mdays[m - 1] + (m == 2 && is_leap(y));
			for (d = 1; d <= n; d++, day++) {
				snprintf(t->date[day], sizeof(t->date[day]),
				    "%04u-%02u-%02u", y, m, d);
				t->month[day] = (uint8_t)m;
				/* 2022-01-01 was a Saturday (weekday 5). */
				cum += day_weight(day, m, 5);
				t->day_cum[day] = cum;
			}
		}
	t->ndays = day;
}

/* Inpatient age profile: births, few children, rising to a peak at 65-84. */
static uint32_t
age_weight(unsigned a)
{
	if (a == 0)
		return 900;
	if (a < 5)
		return 40;
	if (a < 15)
		return 25;
	if (a < 18)
		return 35;
	if (a < 45)
		return 60 + (a - 18);
	if (a < 65)
		return 90 + 4 * (a - 45);
	if (a < 80)
		return 180;
	if (a < 90)
		return 180 - 12 * (a - 80);
	return 60 - 6 * (a - 90);
}

static unsigned
age_band(unsigned a)
{
	if (a == 0)
		return BAND_NEWBORN;
	if (a < 15)
		return BAND_CHILD;
	if (a < 45)
		return BAND_YOUNG;
	if (a < 65)
		return BAND_MIDDLE;
	if (a < 80)
		return BAND_OLD;
	return BAND_ELDERLY;
}

/*
 * ZIPs: 50 per area, suffixes k*37+c mod 100 (a fixed, scattered set so
 * that 4-digit prefixes group a few each); skewed 1/(rank+3) within an area.
 */
static void
build_zips(struct synth_tables *t)
{
	size_t a, k, i = 0;
	unsigned s, step;
	uint32_t cum = 0;

	for (a = 0; a < nitems(zip_areas); a++)
		for (k = 0, step = 0; k < ZIPS_PER_AREA; step++) {
			s = (unsigned)((step * 37 + a * 11 + 1) % 100);
			if (s == 0)
				continue;
			snprintf(t->zip[i], sizeof(t->zip[i]), "%s%02u",
			    zip_areas[a].prefix, s);
			cum += zip_areas[a].weight * (uint32_t)(6000 / (k + 3));
			t->zip_cum[i++] = cum;
			k++;
		}
}

static void
build_tables(struct synth_tables *t)
{
	uint32_t cum = 0;
	size_t a, r;

	build_dates(t);
	for (a = 0; a < NAGES; a++) {
		cum += age_weight((unsigned)a);
		t->age_cum[a] = cum;
	}
	build_zips(t);
	for (a = 0; a < nitems(zip_areas); a++)
		for (cum = 0, r = 0; r < NRACES; r++) {
			cum += zip_areas[a].race[r];
			t->race_cum[a][r] = cum;
		}
}

/* ---- CSV output ---- */

/* One field, quoted (RFC 4180) only when it holds sep, '"', CR or LF. */
static void
put_field(FILE *fp, const char *s, char sep)
{
	const char *p;

	if (strchr(s, sep) == NULL && strpbrk(s, "\"\r\n") == NULL) {
		fputs(s, fp);
		return;
	}
	putc('"', fp);
	for (p = s; *p != '\0'; p++) {
		if (*p == '"')
			putc('"', fp);
		putc(*p, fp);
	}
	putc('"', fp);
}

/* One hierarchy row: the fields joined by ';', LF-terminated. */
static void
put_row(FILE *fp, const char *const *fields, size_t n)
{
	size_t i;

	for (i = 0; i < n; i++) {
		if (i > 0)
			putc(';', fp);
		put_field(fp, fields[i], ';');
	}
	putc('\n', fp);
}

/* ---- hierarchies (ARX format: leaf; level 1; ...; root) ---- */

/* The Safe Harbor age: the age, or "90+" from 90 on. */
static const char *
sh_age(unsigned a, const char *exact)
{
	return a >= 90 ? "90+" : exact;
}

/* Age: value, 5-, 10- and 20-year bands, '*'; for Safe Harbor a level 1
 * of the value under 90, else 90+, and 90+ in every band from 90 on. */
static void
age_rows(FILE *fp, int safe_harbor)
{
	static const unsigned width[] = { 5, 10, 20 };
	char buf[4][16];
	const char *row[6];
	unsigned a, lo;
	size_t i, n;

	for (a = 0; a < NAGES; a++) {
		n = 0;
		snprintf(buf[0], sizeof(buf[0]), "%u", a);
		row[n++] = buf[0];
		if (safe_harbor)
			row[n++] = sh_age(a, buf[0]);
		for (i = 0; i < nitems(width); i++) {
			lo = a - a % width[i];
			snprintf(buf[i + 1], sizeof(buf[i + 1]), "%u-%u", lo,
			    lo + width[i] - 1);
			row[n++] = safe_harbor ? sh_age(a, buf[i + 1]) :
			    buf[i + 1];
		}
		row[n++] = "*";
		put_row(fp, row, n);
	}
}

static void
hier_age(FILE *fp, const struct synth_tables *t)
{
	age_rows(fp, 0);
}

static void
hier_sex(FILE *fp, const struct synth_tables *t)
{
	static const char *const f[] = { "F", "*" }, *const m[] = { "M", "*" };

	put_row(fp, f, 2);
	put_row(fp, m, 2);
}

/* ZIP: 5 digits, 4 digits + '*', 3 digits + '**', '*'. */
static void
hier_zip(FILE *fp, const struct synth_tables *t)
{
	char z4[6], z3[6];
	const char *row[4];
	size_t i;

	for (i = 0; i < NZIPS; i++) {
		snprintf(z4, sizeof(z4), "%.4s*", t->zip[i]);
		snprintf(z3, sizeof(z3), "%.3s**", t->zip[i]);
		row[0] = t->zip[i];
		row[1] = z4;
		row[2] = z3;
		row[3] = "*";
		put_row(fp, row, 4);
	}
}

static void
hier_race(FILE *fp, const struct synth_tables *t)
{
	const char *row[3];
	size_t i;

	for (i = 0; i < NRACES; i++) {
		row[0] = races[i].name;
		row[1] = races[i].group;
		row[2] = "*";
		put_row(fp, row, 3);
	}
}

/* Admission date: day, YYYY-MM, YYYY-Qn, YYYY, '*'. */
static void
hier_date(FILE *fp, const struct synth_tables *t)
{
	char month[8], quarter[8], year[5];
	const char *row[5];
	unsigned m;
	size_t d;

	for (d = 0; d < t->ndays; d++) {
		m = t->month[d];
		snprintf(month, sizeof(month), "%.7s", t->date[d]);
		snprintf(quarter, sizeof(quarter), "%.4s-Q%c", t->date[d],
		    (char)('1' + (m - 1) / 3));
		snprintf(year, sizeof(year), "%.4s", t->date[d]);
		row[0] = t->date[d];
		row[1] = month;
		row[2] = quarter;
		row[3] = year;
		row[4] = "*";
		put_row(fp, row, 5);
	}
}

/* The hierarchy writers, in the order of deid_synth_qis. */
static void (*const hier_writers[])(FILE *, const struct synth_tables *) = {
	hier_age, hier_sex, hier_zip, hier_race, hier_date,
};
_Static_assert(nitems(hier_writers) + 1 == nitems(deid_synth_qis),
    "one hierarchy writer per quasi-identifier");

/* ---- Safe Harbor hierarchies (level 1 = HIPAA Safe Harbor) ---- */

/*
 * HIPAA Safe Harbor's 3-digit ZIP areas of at most 20,000 people (2000
 * census): their ZIPs become 000.  None of the synthetic areas is one.
 */
static const char *const sh_small_zip3[] = {
	"036", "059", "063", "102", "203", "556", "692", "790", "821",
	"823", "830", "831", "878", "879", "884", "890", "893",
};

static void
sh_hier_age(FILE *fp, const struct synth_tables *t)
{
	age_rows(fp, 1);
}

/* ZIP: 5 digits; 3 digits + '**' (000** for the small areas); '*'. */
static void
sh_hier_zip(FILE *fp, const struct synth_tables *t)
{
	char z3[6];
	const char *row[3];
	size_t i, k;

	for (i = 0; i < NZIPS; i++) {
		snprintf(z3, sizeof(z3), "%.3s**", t->zip[i]);
		for (k = 0; k < nitems(sh_small_zip3); k++)
			if (strncmp(t->zip[i], sh_small_zip3[k], 3) == 0)
				memcpy(z3, "000", 3);
		row[0] = t->zip[i];
		row[1] = z3;
		row[2] = "*";
		put_row(fp, row, 3);
	}
}

/* Admission date: day; year; '*'. */
static void
sh_hier_date(FILE *fp, const struct synth_tables *t)
{
	char year[5];
	const char *row[3];
	size_t d;

	for (d = 0; d < t->ndays; d++) {
		snprintf(year, sizeof(year), "%.4s", t->date[d]);
		row[0] = t->date[d];
		row[1] = year;
		row[2] = "*";
		put_row(fp, row, 3);
	}
}

/* Sex and race are not Safe Harbor identifiers: their own hierarchies. */
static void (*const sh_hier_writers[])(FILE *,
    const struct synth_tables *) = {
	sh_hier_age, hier_sex, sh_hier_zip, hier_race, sh_hier_date,
};
_Static_assert(nitems(sh_hier_writers) == nitems(hier_writers),
    "one Safe Harbor hierarchy writer per quasi-identifier");

/* ---- records ---- */

/* Diagnosis given age, sex and month; 0 weight where impossible. */
static uint32_t
diag_weight(const struct diag *dg, unsigned age, unsigned male,
    unsigned month)
{
	uint32_t w;

	if (age < dg->minage || age > dg->maxage)
		return 0;
	w = (uint32_t)dg->weight * dg->sexw[male] *
	    curves[dg->curve][age_band(age)];
	if (dg->winter && (month == 12 || month <= 2))
		w *= 2;
	return w;
}

static const struct diag *
pick_diag(struct rng *r, unsigned age, unsigned male, unsigned month)
{
	uint32_t cum[nitems(diags)], total = 0;
	size_t i;

	for (i = 0; i < nitems(diags); i++) {
		total += diag_weight(&diags[i], age, male, month);
		cum[i] = total;
	}
	/* C_FLAT entries cover every age and sex, so total > 0. */
	return &diags[rng_cdf_pick(r, cum, nitems(diags))];
}

/* Stay in days: geometric with the diagnosis' mean, a day longer if old. */
static unsigned
pick_los(struct rng *r, const struct diag *dg, unsigned age)
{
	uint32_t mean10 = dg->los10 + (age >= 65 ? 10 : 0);
	unsigned los = 1;

	while (los < LOS_MAX && rng_below(r, mean10) >= 10)
		los++;
	return los;
}

/* Draw one admission and write it as a CSV line. */
static void
put_record(FILE *fp, struct rng *r, const struct synth_tables *t, size_t id)
{
	const struct diag *dg;
	size_t day, zip, area, race;
	unsigned age, male, los;
	char name[64];

	day = rng_cdf_pick(r, t->day_cum, t->ndays);
	age = (unsigned)rng_cdf_pick(r, t->age_cum, NAGES);
	male = rng_below(r, 1000) >= female_permille[age_band(age)];
	zip = rng_cdf_pick(r, t->zip_cum, NZIPS);
	area = zip / ZIPS_PER_AREA;
	race = rng_cdf_pick(r, t->race_cum[area], NRACES);
	dg = pick_diag(r, age, male, t->month[day]);
	los = pick_los(r, dg, age);
	snprintf(name, sizeof(name), "%s %s",
	    first_names[male][rng_below(r, nitems(first_names[male]))],
	    last_names[rng_below(r, nitems(last_names))]);

	fprintf(fp, "P%06zu,", id);
	put_field(fp, name, ',');
	fprintf(fp, ",%u,%c,%s,", age, male ? 'M' : 'F', t->zip[zip]);
	put_field(fp, races[race].name, ',');
	fprintf(fp, ",%s,", t->date[day]);
	put_field(fp, dg->text, ',');
	fprintf(fp, ",%u\n", los);
}

static void
put_dataset(FILE *fp, const struct synth_tables *t, size_t nrecords,
    uint64_t seed)
{
	struct rng r;
	size_t i;

	rng_seed(&r, seed);
	for (i = 0; deid_synth_columns[i] != NULL; i++) {
		if (i > 0)
			putc(',', fp);
		put_field(fp, deid_synth_columns[i], ',');
	}
	putc('\n', fp);
	for (i = 1; i <= nrecords; i++)
		put_record(fp, &r, t, i);
}

/* ---- atomic files ---- */

struct atomic_file {
	char	 path[PATH_MAX];
	char	 tmp[PATH_MAX];
	FILE	*fp;
};

/* Create the temporary file beside the target so rename(2) is atomic. */
static int
af_open(struct atomic_file *af, const char *dir, const char *name,
    struct deid_error *err)
{
	int fd, n;

	af->fp = NULL;
	af->tmp[0] = '\0';
	n = snprintf(af->path, sizeof(af->path), "%s/%s", dir, name);
	if (n < 0 || (size_t)n >= sizeof(af->path) ||
	    snprintf(af->tmp, sizeof(af->tmp), "%s/.%s.XXXXXX", dir, name) >=
	    (int)sizeof(af->tmp)) {
		af->tmp[0] = '\0';
		return deid_error_set(err, DEID_ELIMIT, dir, 0, 0,
		    "path too long for %s", name);
	}
	if ((fd = mkostemp(af->tmp, O_CLOEXEC)) == -1) {
		af->tmp[0] = '\0';
		return deid_error_set(err, DEID_EIO, af->path, 0, 0,
		    "cannot create temporary file: %s", strerror(errno));
	}
	if ((af->fp = fdopen(fd, "w")) == NULL) {
		close(fd);
		return deid_error_set(err, DEID_EIO, af->path, 0, 0,
		    "fdopen: %s", strerror(errno));
	}
	return DEID_OK;
}

/* Make the bytes durable, then move them into place. */
static int
af_commit(struct atomic_file *af, struct deid_error *err)
{
	FILE *fp = af->fp;

	af->fp = NULL;
	if (fflush(fp) != 0 || ferror(fp) || fsync(fileno(fp)) != 0) {
		deid_error_set(err, DEID_EIO, af->path, 0, 0,
		    "write failed: %s", strerror(errno));
		fclose(fp);
		return DEID_EIO;
	}
	if (fclose(fp) != 0)
		return deid_error_set(err, DEID_EIO, af->path, 0, 0,
		    "close failed: %s", strerror(errno));
	if (rename(af->tmp, af->path) != 0)
		return deid_error_set(err, DEID_EIO, af->path, 0, 0,
		    "rename failed: %s", strerror(errno));
	af->tmp[0] = '\0';	/* now the real file */
	return DEID_OK;
}

/* After a failure: never leave the temporary file behind. */
static void
af_abort(struct atomic_file *af)
{
	if (af->fp != NULL)
		fclose(af->fp);
	af->fp = NULL;
	if (af->tmp[0] != '\0')
		unlink(af->tmp);
	af->tmp[0] = '\0';
}

/* Make the renames themselves durable. */
static int
sync_dir(const char *dir, struct deid_error *err)
{
	int fd, rc = DEID_OK;

	if ((fd = open(dir, O_RDONLY | O_DIRECTORY | O_CLOEXEC)) == -1)
		return deid_error_set(err, DEID_EIO, dir, 0, 0,
		    "cannot open directory: %s", strerror(errno));
	if (fsync(fd) != 0 && errno != EINVAL)
		rc = deid_error_set(err, DEID_EIO, dir, 0, 0,
		    "fsync: %s", strerror(errno));
	close(fd);
	return rc;
}

/* Write hierarchy number qi (index into deid_synth_qis) atomically. */
static int
write_hierarchy(const char *dir, size_t qi, const struct synth_tables *t,
    void (*const *writers)(FILE *, const struct synth_tables *),
    struct deid_error *err)
{
	struct atomic_file af;
	char name[128];
	int rc;

	snprintf(name, sizeof(name), DEID_SYNTH_HIERARCHY_PREFIX "%s.csv",
	    deid_synth_qis[qi]);
	if ((rc = af_open(&af, dir, name, err)) != DEID_OK)
		goto out;
	writers[qi](af.fp, t);
	rc = af_commit(&af, err);
 out:
	if (rc != DEID_OK)
		af_abort(&af);
	return rc;
}

/* dir/DEID_SYNTH_SAFE_HARBOR_DIR/ with the Safe Harbor hierarchies. */
static int
write_safe_harbor(const char *dir, const struct synth_tables *t,
    struct deid_error *err)
{
	char sub[PATH_MAX];
	size_t i;
	int n, rc;

	n = snprintf(sub, sizeof(sub), "%s/%s", dir, DEID_SYNTH_SAFE_HARBOR_DIR);
	if (n < 0 || (size_t)n >= sizeof(sub))
		return deid_error_set(err, DEID_ELIMIT, dir, 0, 0,
		    "path too long for %s", DEID_SYNTH_SAFE_HARBOR_DIR);
	if (mkdir(sub, 0755) != 0 && errno != EEXIST)
		return deid_error_set(err, DEID_EIO, sub, 0, 0,
		    "cannot create directory: %s", strerror(errno));
	for (i = 0; deid_synth_qis[i] != NULL; i++)
		if ((rc = write_hierarchy(sub, i, t, sh_hier_writers, err)) !=
		    DEID_OK)
			return rc;
	return sync_dir(sub, err);
}

static int
write_dataset(const char *dir, const struct synth_tables *t,
    size_t nrecords, uint64_t seed, struct deid_error *err)
{
	struct atomic_file af;
	int rc;

	if ((rc = af_open(&af, dir, DEID_SYNTH_DATASET, err)) != DEID_OK)
		goto out;
	put_dataset(af.fp, t, nrecords, seed);
	rc = af_commit(&af, err);
 out:
	if (rc != DEID_OK)
		af_abort(&af);
	return rc;
}

int
deid_synth_patients(const char *dir, size_t nrecords, uint64_t seed,
    struct deid_error *err)
{
	struct synth_tables *t = NULL;
	size_t i;
	int rc;

	if (dir == NULL || *dir == '\0')
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0,
		    "no output directory");
	if (nrecords == 0)
		return deid_error_set(err, DEID_EINPUT, NULL, 0, 0,
		    "number of records must be at least 1");
	if (nrecords > DEID_SYNTH_MAX_RECORDS)
		return deid_error_set(err, DEID_ELIMIT, NULL, 0, 0,
		    "at most %d records", DEID_SYNTH_MAX_RECORDS);
	if ((t = calloc(1, sizeof(*t))) == NULL) {
		rc = deid_error_set(err, DEID_ENOMEM, NULL, 0, 0,
		    "out of memory");
		goto out;
	}
	build_tables(t);
	for (i = 0; deid_synth_qis[i] != NULL; i++)
		if ((rc = write_hierarchy(dir, i, t, hier_writers, err)) !=
		    DEID_OK)
			goto out;
	if ((rc = write_safe_harbor(dir, t, err)) != DEID_OK)
		goto out;
	if ((rc = write_dataset(dir, t, nrecords, seed, err)) != DEID_OK)
		goto out;
	rc = sync_dir(dir, err);
 out:
	free(t);
	return rc;
}
