// example-go: a payment adapter in Go, built from gateway_abi.h alone with
// `go build -buildmode=c-shared` (shim.c holds the table and the entry
// point; `gateway plugin new ID --lang go` writes both, renamed). A
// simulated provider: it approves visa up to config.decline_above minor
// units, captures, refunds and voids what it approved, keeps idempotency
// keys, reads JSON strictly with the standard library, and completes every
// accepted call exactly once from a goroutine of its own.
//
// The rules a Go adapter must keep (docs/plugin-authors.md §6):
//   - A panic never crosses into C: every exported function defers
//     `barrier`, which turns a panic into a status. A fatal error (concurrent
//     map writes, a failed thread creation, running out of memory) cannot be
//     recovered: it ends the process, so keep `"isolation": "process"`.
//   - Never block in C, and never block a callback: host services are called
//     from goroutines, at most 8 at a time (cgoGate), and the work runs on
//     goroutines, so the runtime keeps to a few OS threads however many calls
//     are in flight (plugin check measures them).
//   - Replace the simulation in `authorize`, `move` and `verify` with your
//     provider's API, through the host's http_send (to hosts the manifest's
//     `egress` lists). A lost answer is GW_E_OUTCOME_UNKNOWN, never a decline.
package main

/*
#cgo CFLAGS: -I${SRCDIR}
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
void gw_go_complete(void *host, uint64_t call_id, int32_t status, const void *result, size_t result_len);
void gw_go_log(void *host, int32_t level, const void *message, size_t message_len);
*/
import "C"

import (
	"bytes"
	"encoding/json"
	"fmt"
	"regexp"
	"strconv"
	"sync"
	"unicode/utf8"
	"unsafe"
)

const (
	statusOK             = 0
	statusInvalidRequest = 1
	statusUnsupported    = 2
	statusInternal       = 3

	opAuthorize = 1
	opVerify    = 3
	opCapture   = 4
	opRefund    = 5
	opVoid      = 6

	logWarning = 3
)

// The simulated provider's books: its payments by reference, and the
// answer given under each idempotency key with what it was asked.
type payment struct {
	amount    money
	automatic bool
	captured  int64
	refunded  int64
	voided    bool
}

type answered struct {
	asked  string
	result []byte
}

type instance struct {
	host         unsafe.Pointer
	declineAbove int64
	calls        sync.WaitGroup
	lock         sync.Mutex
	payments     map[string]*payment
	answers      map[string]answered
}

var (
	registry  sync.Mutex
	instances = map[uintptr]*instance{}
	last      uintptr
)

// barrier turns a panic in an exported function into `status` (and a log
// line); it must be deferred first in every function C calls.
func barrier(status *C.int32_t, host unsafe.Pointer) {
	if recovered := recover(); recovered != nil {
		if host != nil {
			note := fmt.Sprintf("example-go: a panic was stopped at the boundary: %v", recovered)
			logLine(host, logWarning, note)
		}
		if status != nil {
			*status = statusInternal
		}
	}
}

// cgoGate lets at most 8 goroutines into a host service at once. A
// goroutine inside a cgo call holds an OS thread for as long as the call
// takes (under "isolation": "process" a completion is a write to the host,
// which waits while the host is busy), and the runtime starts another thread
// for the goroutines left; a goroutine waiting on this channel holds none.
var cgoGate = make(chan struct{}, 8)

func logLine(host unsafe.Pointer, level int32, line string) {
	text := []byte(line)
	if len(text) == 0 {
		return
	}
	cgoGate <- struct{}{}
	defer func() { <-cgoGate }()
	C.gw_go_log(host, C.int32_t(level), unsafe.Pointer(&text[0]), C.size_t(len(text)))
}

func complete(host unsafe.Pointer, callID uint64, status int32, document []byte) {
	if len(document) == 0 {
		document = []byte(`{"message":"no document"}`)
	}
	cgoGate <- struct{}{}
	defer func() { <-cgoGate }()
	C.gw_go_complete(host, C.uint64_t(callID), C.int32_t(status), unsafe.Pointer(&document[0]), C.size_t(len(document)))
}

//export goCreate
func goCreate(host unsafe.Pointer, config unsafe.Pointer, length C.size_t, message **C.char, messageLength *C.size_t) (handle C.uintptr_t) {
	defer func() {
		if recover() != nil {
			handle = 0
		}
	}()
	refuse := func(text string) C.uintptr_t {
		*message = C.CString(text)
		*messageLength = C.size_t(len(text))
		return 0
	}
	settings := struct {
		DeclineAbove *json.Number `json:"decline_above"`
	}{}
	raw := C.GoBytes(config, C.int(length))
	if len(bytes.TrimSpace(raw)) > 0 {
		if err := strictDecode(raw, &settings); err != nil {
			return refuse("example-go: config must be a JSON object: " + err.Error())
		}
	}
	declineAbove := int64(1_000_000)
	if settings.DeclineAbove != nil {
		value, err := strconv.ParseInt(settings.DeclineAbove.String(), 10, 64)
		if err != nil || value <= 0 {
			return refuse("example-go: config.decline_above must be a positive amount in minor units")
		}
		declineAbove = value
	}
	registry.Lock()
	defer registry.Unlock()
	last++
	instances[last] = &instance{host: host, declineAbove: declineAbove, payments: map[string]*payment{}, answers: map[string]answered{}}
	return C.uintptr_t(last)
}

//export goDestroy
func goDestroy(handle C.uintptr_t) {
	defer barrier(nil, nil)
	registry.Lock()
	found := instances[uintptr(handle)]
	delete(instances, uintptr(handle))
	registry.Unlock()
	if found != nil {
		found.calls.Wait() // every call owed a completion has completed
	}
}

//export goCancel
func goCancel(handle C.uintptr_t, callID C.uint64_t) {
	defer barrier(nil, nil)
	// Calls here answer at once on their goroutine: each completes once,
	// cancelled or not. An adapter waiting on its provider would stop waiting
	// here and complete GW_E_CANCELLED (or GW_E_OUTCOME_UNKNOWN if it sent).
	_ = handle
	_ = callID
}

//export goInvoke
func goInvoke(handle C.uintptr_t, callID C.uint64_t, operation C.int32_t, body unsafe.Pointer, length C.size_t) (status C.int32_t) {
	registry.Lock()
	found := instances[uintptr(handle)]
	registry.Unlock()
	if found == nil {
		return statusInvalidRequest
	}
	defer barrier(&status, found.host)
	switch operation {
	case opAuthorize, opVerify, opCapture, opRefund, opVoid:
	default:
		return statusUnsupported
	}
	request := C.GoBytes(body, C.int(length)) // borrowed: copied before invoke returns
	work, err := parse(int32(operation), request)
	if err != nil {
		return statusInvalidRequest
	}
	found.calls.Add(1)
	go func(id uint64) {
		defer found.calls.Done()
		// A goroutine's panic is not the caller's: its own barrier completes
		// the call (nothing was sent here, so GW_E_INTERNAL says so).
		completed := false
		defer func() {
			if recovered := recover(); recovered != nil {
				logLine(found.host, logWarning, fmt.Sprintf("example-go: a panic was stopped in a call: %v", recovered))
				if !completed {
					complete(found.host, id, statusInternal, []byte(`{"message":"example-go failed before sending anything"}`))
				}
			}
		}()
		result, status := found.answer(work)
		completed = true
		complete(found.host, id, status, result)
	}(uint64(callID))
	return statusOK
}

// MARK: requests, read strictly

type money struct {
	Value    int64  `json:"value"`
	Currency string `json:"currency"`
}

type request struct {
	operation         int32
	PaymentID         string          `json:"paymentId"`
	IdempotencyKey    string          `json:"idempotencyKey"`
	ProviderReference *string         `json:"providerReference"`
	Method            string          `json:"method"`
	Capture           string          `json:"capture"`
	RawAmount         json.RawMessage `json:"amount"`
	amount            *money
}

var currencyCode = regexp.MustCompile(`^[A-Z]{3}$`)
var integer = regexp.MustCompile(`^[0-9]+$`)

// parse reads a request as the header requires: UTF-8, one JSON object
// nested at most 64 deep, the operation's members present and of their
// types, an amount a positive integer in an ISO 4217 code.
func parse(operation int32, body []byte) (*request, error) {
	var asked request
	if err := strictDecode(body, &asked); err != nil {
		return nil, err
	}
	asked.operation = operation
	if asked.PaymentID == "" {
		return nil, fmt.Errorf("paymentId is required")
	}
	needsKey := operation != opVerify
	if needsKey && asked.IdempotencyKey == "" {
		return nil, fmt.Errorf("idempotencyKey is required")
	}
	if operation == opAuthorize && asked.Method == "" {
		return nil, fmt.Errorf("method is required")
	}
	if operation == opAuthorize || operation == opCapture || operation == opRefund {
		if len(asked.RawAmount) == 0 {
			return nil, fmt.Errorf("amount is required")
		}
		var shape struct {
			Value    json.RawMessage `json:"value"`
			Currency string          `json:"currency"`
		}
		if err := json.Unmarshal(asked.RawAmount, &shape); err != nil {
			return nil, err
		}
		if !integer.Match(shape.Value) || !currencyCode.MatchString(shape.Currency) {
			return nil, fmt.Errorf("amount must be a positive integer in an ISO 4217 code")
		}
		value, err := strconv.ParseInt(string(shape.Value), 10, 64)
		if err != nil || value <= 0 {
			return nil, fmt.Errorf("amount must be positive")
		}
		asked.amount = &money{Value: value, Currency: shape.Currency}
	}
	return &asked, nil
}

// strictDecode decodes one JSON object, refusing text that is not UTF-8,
// nesting past 64, and anything after the object.
func strictDecode(body []byte, into interface{}) error {
	if !utf8.Valid(body) {
		return fmt.Errorf("the document is not UTF-8")
	}
	depth, deepest, inString, escaped := 0, 0, false, false
	for _, b := range body {
		switch {
		case inString && escaped:
			escaped = false
		case inString && b == '\\':
			escaped = true
		case b == '"':
			inString = !inString
		case !inString && (b == '{' || b == '['):
			depth++
			if depth > deepest {
				deepest = depth
			}
		case !inString && (b == '}' || b == ']'):
			depth--
		}
	}
	if deepest > 64 {
		return fmt.Errorf("the document nests deeper than 64")
	}
	trimmed := bytes.TrimSpace(body)
	if len(trimmed) == 0 || trimmed[0] != '{' {
		return fmt.Errorf("the document is not a JSON object")
	}
	decoder := json.NewDecoder(bytes.NewReader(body))
	decoder.UseNumber()
	if err := decoder.Decode(into); err != nil {
		return err
	}
	if decoder.More() {
		return fmt.Errorf("something follows the object")
	}
	var rest json.RawMessage
	if err := decoder.Decode(&rest); err == nil {
		return fmt.Errorf("something follows the object")
	}
	return nil
}

// MARK: the simulated provider

type problem struct {
	Code                 string `json:"code"`
	Message              string `json:"message"`
	Retryable            bool   `json:"retryable"`
	SafeToRetryElsewhere bool   `json:"safeToRetryElsewhere"`
}

type totals struct {
	Captured money `json:"captured"`
	Refunded money `json:"refunded"`
	Voided   bool  `json:"voided"`
}

type result struct {
	Status            string   `json:"status"`
	ProviderReference string   `json:"providerReference,omitempty"`
	Amount            *money   `json:"amount,omitempty"`
	Problem           *problem `json:"problem,omitempty"`
	ProviderStatus    string   `json:"providerStatus,omitempty"`
	Totals            *totals  `json:"totals,omitempty"`
}

func encoded(value result) []byte {
	text, err := json.Marshal(value)
	if err != nil {
		panic(err) // a result always encodes; the barrier would catch it
	}
	return text
}

func failed(reference, code, message string) result {
	return result{Status: "failed", ProviderReference: reference, Problem: &problem{Code: code, Message: message}}
}

// answer is one call's result document and status.
func (in *instance) answer(asked *request) ([]byte, int32) {
	in.lock.Lock()
	defer in.lock.Unlock()
	if asked.operation == opVerify {
		return encoded(in.verify(asked)), statusOK
	}
	fingerprint := fmt.Sprintf("%d %s %s %s %v", asked.operation, asked.PaymentID, asked.Method, asked.Capture, asked.amount)
	if asked.ProviderReference != nil {
		fingerprint += " " + *asked.ProviderReference
	}
	if first, ok := in.answers[asked.IdempotencyKey]; ok {
		if first.asked != fingerprint {
			return []byte(`{"message":"this idempotency key was used with another request; nothing was done"}`), statusInvalidRequest
		}
		return first.result, statusOK
	}
	var outcome result
	switch asked.operation {
	case opAuthorize:
		outcome = in.authorize(asked)
	default:
		outcome = in.move(asked)
	}
	document := encoded(outcome)
	in.answers[asked.IdempotencyKey] = answered{asked: fingerprint, result: document}
	return document, statusOK
}

func (in *instance) authorize(asked *request) result {
	reference := "go_" + asked.PaymentID
	if asked.Method != "visa" {
		return failed(reference, "payment_failed", "example-go takes visa only")
	}
	if asked.amount.Value > in.declineAbove {
		outcome := failed(reference, "card_declined", fmt.Sprintf("the simulated issuer declines above %d", in.declineAbove))
		outcome.ProviderStatus = "DECLINED"
		return outcome
	}
	automatic := asked.Capture != "manual"
	booked := &payment{amount: *asked.amount, automatic: automatic}
	status, providerStatus := "authorized", "AUTHORIZED"
	if automatic {
		booked.captured = asked.amount.Value
		status, providerStatus = "succeeded", "CAPTURED"
	}
	in.payments[reference] = booked
	return result{Status: status, ProviderReference: reference, Amount: asked.amount, ProviderStatus: providerStatus}
}

// move is a capture, refund or void of the payment the request names.
func (in *instance) move(asked *request) result {
	reference := ""
	if asked.ProviderReference != nil {
		reference = *asked.ProviderReference
	}
	booked, ok := in.payments[reference]
	if !ok {
		return failed(reference, "unknown_payment", "no such payment")
	}
	if asked.amount != nil && asked.amount.Currency != booked.amount.Currency {
		return failed(reference, "currency_mismatch", "the payment is in "+booked.amount.Currency)
	}
	switch asked.operation {
	case opCapture:
		if booked.voided || booked.automatic {
			return failed(reference, "invalid_state", "nothing is left to capture")
		}
		if booked.captured+asked.amount.Value > booked.amount.Value {
			return failed(reference, "amount_exceeds_authorized", "more than is left to capture")
		}
		booked.captured += asked.amount.Value
	case opRefund:
		if booked.refunded+asked.amount.Value > booked.captured {
			return failed(reference, "amount_exceeds_captured", "more than is left to refund")
		}
		booked.refunded += asked.amount.Value
	case opVoid:
		if booked.captured > 0 || booked.voided {
			return failed(reference, "invalid_state", "only an uncaptured authorization can be voided")
		}
		booked.voided = true
	}
	return result{Status: "succeeded", ProviderReference: reference, Amount: asked.amount, ProviderStatus: "DONE"}
}

func (in *instance) verify(asked *request) result {
	reference := "go_" + asked.PaymentID
	if asked.ProviderReference != nil {
		reference = *asked.ProviderReference
	}
	booked, ok := in.payments[reference]
	if !ok {
		return failed(reference, "unknown_payment", "no such payment")
	}
	status := "authorized"
	switch {
	case booked.voided:
		status = "cancelled"
	case booked.captured > 0:
		status = "succeeded"
	}
	currency := booked.amount.Currency
	amount := booked.amount
	return result{Status: status, ProviderReference: reference, Amount: &amount, ProviderStatus: status,
		Totals: &totals{Captured: money{booked.captured, currency}, Refunded: money{booked.refunded, currency}, Voided: booked.voided}}
}

func main() {}
