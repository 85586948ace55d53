package client

import (
	"context"
	"net/http"

	"github.com/reinhq/rein/internal/api"
)

// RewindFiles withdraws every turn from turn on and puts the workspace's files back as they stood
// when it began (capability rewind-files.v1). The answer's Files says what was written, removed
// and left as it was.
func (c *Client) RewindFiles(ctx context.Context, id, op string, turn int64) (api.EditResult, error) {
	var out api.EditResult
	err := c.do(ctx, http.MethodPost, convPath(id, "/rewind"), api.RewindRequest{Op: op, Turn: turn, Files: true}, &out)
	return out, err
}
