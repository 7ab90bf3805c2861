/// The order in which to look up a batch of points: along a Z-order curve of their coordinates
/// (about 600 m cells), so that consecutive lookups read the same index pages. Both batch doors
/// use it (`geoattrctl lookup --batch` and the back office's library), each writing its answers
/// back in input order.
public enum SpatialOrder {
    /// Points the back office's door sorts at once (geoindex-bench --spatial-order times the
    /// reader in the same order); `geoattrctl lookup --batch` sorts each of its rounds.
    public static let blockSize = 1 << 16

    /// `0..<count` cut into blocks of `blockSize`, each with its indices (from the block's start)
    /// in spatial order: how a door that sorts a block at a time walks a batch.
    public static func blocks(
        count: Int, point: @escaping (Int) -> (latitude: Double, longitude: Double)
    ) -> LazyMapSequence<StrideTo<Int>, (range: Range<Int>, order: [UInt32])> {
        stride(from: 0, to: count, by: blockSize).lazy.map { start in
            let range = start..<min(start + blockSize, count)
            return (range, indices(count: range.count) { point(start + $0) })
        }
    }

    /// Indices `0..<count` sorted along the curve, points that are not finite coordinates last;
    /// ties keep input order. Input order itself when at least half the points lie within about
    /// 10 km of the point before.
    public static func indices(count: Int, point: (Int) -> (latitude: Double, longitude: Double)) -> [UInt32] {
        var keys = [UInt64](repeating: 0, count: count)
        for index in 0..<count {
            let (latitude, longitude) = point(index)
            var cell = UInt64(UInt32.max)
            if latitude.isFinite, longitude.isFinite {
                cell = UInt64(zOrder(latitude: latitude, longitude: longitude))
            }
            keys[index] = cell << 32 | UInt64(index)
        }
        // Input already in spatial order, a device's track say, is left in its own order, which
        // keeps consecutive points closer than any curve does (sorting made tracks 15% slower).
        var neighbours = 0
        for index in keys.indices.dropFirst() where keys[index] >> neighbourShift == keys[index - 1] >> neighbourShift {
            neighbours += 1
        }
        if neighbours * 2 >= keys.count { return Array(0..<UInt32(keys.count)) }
        keys.sort()
        return keys.map { UInt32(truncatingIfNeeded: $0) }
    }

    /// Keys whose bits above this agree lie in the same Z-order cell of about 10 km.
    private static let neighbourShift: UInt64 = 32 + 8

    /// The Z-order (Morton) code of a point on a 65,536 x 65,536 grid over the globe.
    public static func zOrder(latitude: Double, longitude: Double) -> UInt32 {
        func spread(_ value: UInt32) -> UInt32 {
            var value = value & 0xFFFF
            value = (value | (value << 8)) & 0x00FF_00FF
            value = (value | (value << 4)) & 0x0F0F_0F0F
            value = (value | (value << 2)) & 0x3333_3333
            value = (value | (value << 1)) & 0x5555_5555
            return value
        }
        let x = UInt32(min(max((longitude + 180) / 360 * 65_536, 0), 65_535))
        let y = UInt32(min(max((latitude + 90) / 180 * 65_536, 0), 65_535))
        return spread(x) | spread(y) << 1
    }
}
