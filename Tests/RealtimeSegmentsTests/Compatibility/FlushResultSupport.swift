import RealtimeSegments

extension FlushResult {
    /// The client's form of the outcome, for tests written against `SegmentsFlushResult`.
    var result: SegmentsFlushResult {
        switch self {
        case .success(let count): .success(count)
        case .noInternetConnection: .failure(SegmentsError(.network, "no internet connection"))
        case .flushAlreadyInProgress: .failure(SegmentsError(.invalidConfiguration, "a flush already in progress (never reported)"))
        case .error(let error): .failure(SegmentsError.wrapping(error))
        }
    }

    /// The number uploaded, or the failure thrown.
    func get() throws -> Int { try result.get() }
}
