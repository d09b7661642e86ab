extension Duration {
    /// Whole nanoseconds (rounded toward zero), saturating at `Int64.max`:
    /// what timers, deadlines and metrics take.
    public var nanoseconds: Int64 {
        let (seconds, attoseconds) = components
        guard seconds < Int64.max / 1_000_000_000 else { return .max }
        return seconds * 1_000_000_000 + attoseconds / 1_000_000_000
    }
}
