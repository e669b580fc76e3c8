/// The event queue's limits shared by the tracking pipeline (which admits items) and the stores
/// (which read them back): one number in one place, since Data and Persistence never see each other.
package enum EventQueueLimits {
    /// The default capacity: 100,000 events and customer updates waiting for upload
    /// (<doc:Behaviour#E6>). The file store's reader stops there too (<doc:Behaviour#P7>).
    package static let defaultCapacity = 100_000
}
