/*
 * api/mount.h — writing a released dataset into the embedded analytics
 * backend's mount dir, and taking it out again (docs/analytics.md).
 */
#ifndef API_MOUNT_H
#define API_MOUNT_H

#include <stddef.h>
#include <stdint.h>

struct mount_info {
	const char	*name;		/* the dataset's name (meta.json) */
	int64_t		 version;	/* the store's mount version */
	int64_t		 dataset;	/* the store's dataset id: the dir */
	const char	*raw_sha256;
	const char	*released;	/* the gate's output file */
	long		 records;	/* from the report; -1: count lines */
	const char	*report;	/* the gate's report JSON or NULL: its
					   "summary" goes to meta.json */
};

/* Replace <mount_dir>/<dataset id> atomically.  0, or -1 and a message
 * (the previous version, if any, is still there). */
int	mount_embedded(const char *mount_dir, const struct mount_info *mi,
	    char *err, size_t errlen);
/* Take <mount_dir>/<dataset id> away in one rename; absent is fine; one
 * whose meta.json names another dataset is refused and left alone. */
int	unmount_embedded(const char *mount_dir, int64_t dataset, char *err,
	    size_t errlen);

#endif
