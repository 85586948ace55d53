package journal

import (
	"errors"
	"fmt"
	iofs "io/fs"
	"path/filepath"

	"github.com/reinhq/rein/internal/fsys"
	"github.com/reinhq/rein/internal/record"
)

// BlobDir is the directory beside a record that holds its blobs: the payloads of records too large
// for a line, each in a file named by the SHA-256 of its bytes (64 lowercase hex digits).
const BlobDir = "blobs"

// MaxBlob bounds one blob: the payload of one record.
const MaxBlob = 256 << 20

// PutBlob stores data under digest in the blobs directory beside the record at path, durably: the
// bytes go to a temporary file that is synced and then renamed into place, and the directory is
// synced, so a blob line appended after PutBlob returns never points to a blob a crash can lose or
// cut. A blob already stored under digest is kept (blobs are content-addressed).
func PutBlob(fs fsys.FS, path, digest string, data []byte) error {
	if len(data) > MaxBlob {
		return fmt.Errorf("store blob %s of %s: %w: it is %d bytes; a record's payload must be under %d", digest, path, ErrLine, len(data), MaxBlob)
	}
	dir := filepath.Join(filepath.Dir(path), BlobDir)
	final := filepath.Join(dir, digest)
	if fi, err := fs.Stat(final); err == nil && fi.Size() == int64(len(data)) {
		return nil
	}
	if err := fsys.MkdirAllSync(fs, dir); err != nil {
		return fmt.Errorf("store blob: %w", err)
	}
	tmp := final + ".tmp"
	if err := fs.Remove(tmp); err != nil && !errors.Is(err, iofs.ErrNotExist) {
		return fmt.Errorf("store blob %s: %w", digest, err)
	}
	f, err := fs.Create(tmp)
	if err != nil {
		return fmt.Errorf("store blob %s: %w", digest, err)
	}
	_, werr := f.Write(data)
	if werr == nil {
		werr = f.Sync()
	}
	if err := errors.Join(werr, f.Close()); err != nil {
		return fmt.Errorf("store blob %s: %w (%w)", digest, err, ErrPoisoned)
	}
	if err := fs.Rename(tmp, final); err != nil {
		return fmt.Errorf("store blob %s: %w", digest, err)
	}
	if err := fs.SyncDir(dir); err != nil {
		return fmt.Errorf("store blob %s: %w (%w)", digest, err, ErrPoisoned)
	}
	return nil
}

// Blobs returns the reader of the blobs beside the record at path, for record.DecodeWith. It
// checks nothing itself: the decoder checks every blob against its digest.
func Blobs(fs fsys.FS, path string) record.Blobs {
	dir := filepath.Join(filepath.Dir(path), BlobDir)
	return func(digest string) ([]byte, error) {
		if len(digest) != 64 {
			return nil, fmt.Errorf("%q is not a blob digest", digest)
		}
		fi, err := fs.Stat(filepath.Join(dir, digest))
		if err != nil {
			return nil, err
		}
		if fi.Size() > MaxBlob {
			return nil, fmt.Errorf("blob %s is %d bytes, more than a record's payload can be", digest, fi.Size())
		}
		return fs.ReadFile(filepath.Join(dir, digest))
	}
}
