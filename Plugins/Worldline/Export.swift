import GatewayAdapterSDK

/// The adapter's one exported symbol.
@_cdecl("gw_adapter_entry")
public func gatewayAdapterEntry(_ negotiation: UnsafeMutableRawPointer?) -> Int32 {
    AdapterExport.negotiate(negotiation, WorldlineAdapter.self)
}
