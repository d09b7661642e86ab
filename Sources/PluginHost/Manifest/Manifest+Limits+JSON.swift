import GatewayPayloads

/// LOAD's `limits` (``RunnerLoad``): the property names, not the manifest's
/// snake_case (the manifest is read by ``ManifestValidator``); the optional
/// limits omitted when nil.
extension Manifest.Limits: JSONPayload {
    public func write(to w: inout JSONWriter) {
        w.beginObject()
        w.member("memoryMegabytes", memoryMegabytes)
        w.member("openFiles", openFiles)
        w.member("cpuSecondsPerCall", cpuSecondsPerCall)
        w.member("cancelGraceMilliseconds", cancelGraceMilliseconds)
        w.member("maxCrashes", maxCrashes)
        w.member("crashWindowSeconds", crashWindowSeconds)
        w.endObject()
    }

    public init(parsing p: inout JSONParser) throws(JSONParseError) {
        var memory: Int?, files: Int?, cpu: Int?, grace: Int?, crashes: Int?, window: Int?
        try p.object { key, p throws(JSONParseError) in
            switch key {
            case "memoryMegabytes": memory = p.takeNull() ? nil : Int(try p.integer())
            case "openFiles": files = p.takeNull() ? nil : Int(try p.integer())
            case "cpuSecondsPerCall": cpu = p.takeNull() ? nil : Int(try p.integer())
            case "cancelGraceMilliseconds": grace = Int(try p.integer())
            case "maxCrashes": crashes = Int(try p.integer())
            case "crashWindowSeconds": window = Int(try p.integer())
            default: try p.skipValue()
            }
        }
        self.init(
            memoryMegabytes: memory, openFiles: files, cpuSecondsPerCall: cpu,
            cancelGraceMilliseconds: try required(grace, "cancelGraceMilliseconds", p),
            maxCrashes: try required(crashes, "maxCrashes", p), crashWindowSeconds: try required(window, "crashWindowSeconds", p))
    }
}
