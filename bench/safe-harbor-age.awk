# bench/safe-harbor-age.awk — an ARX age hierarchy (leaf;level 1;...;root,
# ';'-separated) made HIPAA Safe Harbor-friendly: a new level 1 that keeps
# each age under 90 and groups every age from 90 on as "90+", and "90+"
# kept whole at every level above it up to the root.  Level 1 of the
# result is Safe Harbor for age (--safe-harbor age=1).
#   awk -f bench/safe-harbor-age.awk hierarchy_age.csv > sh/hierarchy_age.csv
BEGIN { FS = OFS = ";" }
{
	top = ($1 + 0 >= 90)
	printf "%s;%s", $1, top ? "90+" : $1
	for (i = 2; i < NF; i++)
		printf ";%s", top ? "90+" : $i
	printf ";%s\n", $NF
}
