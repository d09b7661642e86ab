import GatewayPayloads

// How the API's `/v1/providers` and `gateway providers --json` write a
// sandbox's layers and resources: one place for both.

extension ProviderStatus.Sandbox.Layer {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("layer", layer)
        w.member("inForce", inForce)
        w.member("reason", reason)
        w.endObject()
    }
}

extension ProviderStatus.Sandbox.Resources {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("cgroup", cgroup)
        w.key("limits")
        w.beginArray()
        for limit in limits { w.string(limit) }
        w.endArray()
        w.member("reason", reason)
        w.endObject()
    }
}
