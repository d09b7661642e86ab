import Logging

extension ProviderSandbox {
    /// A sandbox with the simulators of every shipped provider adapter.
    public static func shipped(faults: FaultPlan = FaultPlan(), logger: Logger = Logger(label: "sandbox")) -> ProviderSandbox {
        ProviderSandbox(simulators: [HyperPaySimulator(), STCPaySimulator(), TabbySimulator(), TamaraSimulator(), SwedbankPaySimulator(), WorldlineSimulator()],
                        faults: faults, logger: logger)
    }
}
