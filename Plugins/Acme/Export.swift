import GatewayAdapterSDK

@_cdecl("gw_adapter_entry")
public func gatewayAdapterEntry(_ negotiation: UnsafeMutableRawPointer?) -> Int32 {
    AdapterExport.negotiate(negotiation, AcmeAdapter.self)
}
