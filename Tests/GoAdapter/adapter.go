// A Go adapter for the host's tests, built with `go build -buildmode=c-shared`
// from the header alone (shim.c holds the table and the entry point). It
// takes visa in SAR: authorize and verify succeed at once. Each call runs on
// a goroutine of its own and exercises what a Go runtime does that a C
// adapter does not: more goroutines, timers, allocation and a collection,
// so that under "isolation": "process" the sandbox is shown to let a Go
// runtime live (its threads, signals, timers and memory) with every layer in
// force.
package main

/*
#cgo CFLAGS: -I${SRCDIR}/../../Sources/CGatewayABI/include
#include <stdint.h>
#include <stdlib.h>
void gw_go_complete(void *host, uint64_t call_id, int32_t status, const void *result, size_t result_len);
void gw_go_log(void *host, const char *message, size_t message_len);
*/
import "C"

import (
	"encoding/json"
	"runtime"
	"sync"
	"time"
	"unsafe"
)

const (
	statusOK             = 0
	statusInvalidRequest = 1
	statusUnsupported    = 2
	operationAuthorize   = 1
	operationVerify      = 3
)

type instance struct {
	host  unsafe.Pointer
	calls sync.WaitGroup
}

var (
	lock      sync.Mutex
	instances = map[uintptr]*instance{}
	last      uintptr
)

type money struct {
	Value    int64  `json:"value"`
	Currency string `json:"currency"`
}

type request struct {
	PaymentID         string  `json:"paymentId"`
	Amount            *money  `json:"amount"`
	ProviderReference *string `json:"providerReference"`
}

type result struct {
	Status            string `json:"status"`
	ProviderReference string `json:"providerReference"`
	Amount            *money `json:"amount,omitempty"`
	ProviderStatus    string `json:"providerStatus"`
}

//export goCreate
func goCreate(host unsafe.Pointer) C.uintptr_t {
	lock.Lock()
	defer lock.Unlock()
	last++
	instances[last] = &instance{host: host}
	return C.uintptr_t(last)
}

//export goDestroy
func goDestroy(handle C.uintptr_t) {
	lock.Lock()
	found := instances[uintptr(handle)]
	delete(instances, uintptr(handle))
	lock.Unlock()
	if found != nil {
		found.calls.Wait()
	}
}

//export goInvoke
func goInvoke(handle C.uintptr_t, callID C.uint64_t, operation C.int32_t, body unsafe.Pointer, length C.size_t) C.int32_t {
	lock.Lock()
	found := instances[uintptr(handle)]
	lock.Unlock()
	if found == nil {
		return statusInvalidRequest
	}
	if operation != operationAuthorize && operation != operationVerify {
		return statusUnsupported
	}
	var asked request
	if err := json.Unmarshal(C.GoBytes(body, C.int(length)), &asked); err != nil || asked.PaymentID == "" {
		return statusInvalidRequest
	}
	found.calls.Add(1)
	go func() {
		defer found.calls.Done()
		answer := result{Status: "succeeded", ProviderReference: "go:" + asked.PaymentID, Amount: asked.Amount}
		if operation == operationVerify && asked.ProviderReference != nil {
			answer.ProviderReference = *asked.ProviderReference
		}
		answer.ProviderStatus = exercise()
		text, _ := json.Marshal(answer)
		note := "go-mock answered on a goroutine (" + runtime.Version() + ")"
		message := C.CString(note)
		C.gw_go_log(found.host, message, C.size_t(len(note)))
		C.free(unsafe.Pointer(message))
		C.gw_go_complete(found.host, C.uint64_t(callID), statusOK, unsafe.Pointer(&text[0]), C.size_t(len(text)))
	}()
	return statusOK
}

// exercise starts goroutines that sleep on timers and allocate, collects
// garbage, and says how many OS threads the runtime may use.
func exercise() string {
	var group sync.WaitGroup
	sizes := make(chan int, 16)
	for i := 0; i < 16; i++ {
		group.Add(1)
		go func(i int) {
			defer group.Done()
			time.Sleep(time.Duration(i%4) * time.Millisecond)
			sizes <- len(make([]byte, 1<<16))
		}(i)
	}
	group.Wait()
	close(sizes)
	total := 0
	for size := range sizes {
		total += size
	}
	runtime.GC()
	if total != 16<<16 {
		return "allocation went wrong"
	}
	return "go ok"
}

func main() {}
