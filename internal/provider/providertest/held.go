// Package providertest has what the provider packages' tests share.
package providertest

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"net/http"

	"github.com/reinhq/rein/internal/provider"
)

// HeldBody plays, for an encoder's tests, what the agent does with the bodies a provider.Memo helps build:
// it holds the last body built (as the conversation's validator does) and gives the one before
// back to the memo (Recycle) once a later one is built. Next reports an encoding that wrote over
// the body held.
type HeldBody struct {
	body, copy []byte
}

// Next takes the outcome of the next encoding through memo.
func (h *HeldBody) Next(memo *provider.Memo, body []byte, err error) error {
	if h.body != nil && !bytes.Equal(h.body, h.copy) {
		return errors.New("the encoding wrote over the last body, which its validator still holds")
	}
	if err != nil {
		return nil
	}
	memo.Recycle(h.body)
	h.body, h.copy = body, bytes.Clone(body)
	return nil
}

// KeptBodies is an http.RoundTripper that answers every request at once with Stream, an event
// stream, without reading its body, and keeps the body's readers: the one it was given and one
// it gets again, as a transport does to retry. After the client's Send has returned, Readable
// reports any of them that still reads (provider.Body).
type KeptBodies struct {
	Stream  []byte
	readers []io.Reader
}

func (k *KeptBodies) RoundTrip(r *http.Request) (*http.Response, error) {
	if r.GetBody == nil || r.ContentLength <= 0 {
		return nil, fmt.Errorf("a request body with no way to get it again, or no length (%d)", r.ContentLength)
	}
	again, err := r.GetBody()
	if err != nil {
		return nil, err
	}
	k.readers = append(k.readers, r.Body, again)
	return &http.Response{StatusCode: http.StatusOK, Header: http.Header{"Content-Type": {"text/event-stream"}},
		Body: io.NopCloser(bytes.NewReader(k.Stream)), Request: r}, nil
}

// Readable reports a kept reader that still reads.
func (k *KeptBodies) Readable() error {
	if len(k.readers) == 0 {
		return errors.New("no request came")
	}
	for i, r := range k.readers {
		if n, err := r.Read(make([]byte, 16)); n > 0 || err == nil || err == io.EOF {
			return fmt.Errorf("reader %d of the body read %d bytes (%v)", i, n, err)
		}
	}
	return nil
}
