//! The libCacheSim `oracleGeneral` record.

/// Size in bytes of one packed `oracleGeneral` record.
pub const ORACLE_RECORD_SIZE: usize = 24;

/// One libCacheSim `oracleGeneral` record: little-endian and packed, fields at
/// byte offsets 0, 4, 12 and 16, no file header.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Default)]
pub struct OracleRecord {
    /// Request time (libCacheSim uses seconds).
    pub clock_time: u32,
    /// Object id; the page key.
    pub obj_id: u64,
    /// Object size in bytes (ignored by the page readers).
    pub obj_size: u32,
    /// 1-based index of the next request to the same object, or −1 (or
    /// `i64::MAX`) if there is none.
    pub next_access_vtime: i64,
}

impl OracleRecord {
    /// Encodes the record in its 24-byte on-disk layout.
    pub fn to_le_bytes(&self) -> [u8; ORACLE_RECORD_SIZE] {
        let mut b = [0u8; ORACLE_RECORD_SIZE];
        b[0..4].copy_from_slice(&self.clock_time.to_le_bytes());
        b[4..12].copy_from_slice(&self.obj_id.to_le_bytes());
        b[12..16].copy_from_slice(&self.obj_size.to_le_bytes());
        b[16..24].copy_from_slice(&self.next_access_vtime.to_le_bytes());
        b
    }

    /// Decodes a record from its 24-byte on-disk layout.
    pub fn from_le_bytes(b: &[u8; ORACLE_RECORD_SIZE]) -> Self {
        OracleRecord {
            clock_time: u32::from_le_bytes([b[0], b[1], b[2], b[3]]),
            obj_id: obj_id_of(b),
            obj_size: u32::from_le_bytes([b[12], b[13], b[14], b[15]]),
            next_access_vtime: i64::from_le_bytes([b[16], b[17], b[18], b[19], b[20], b[21], b[22], b[23]]),
        }
    }
}

/// The `obj_id` field of an encoded record.
#[inline]
pub(crate) fn obj_id_of(b: &[u8; ORACLE_RECORD_SIZE]) -> u64 {
    u64::from_le_bytes([b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11]])
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn round_trip() {
        let r = OracleRecord {
            clock_time: 0x0055_f76a,
            obj_id: 0x028f_1a09,
            obj_size: 512,
            next_access_vtime: -1,
        };
        let b = r.to_le_bytes();
        // The first record of the CloudPhysics sample, byte for byte.
        assert_eq!(
            b,
            [
                0x6a, 0xf7, 0x55, 0x00, 0x09, 0x1a, 0x8f, 0x02, 0, 0, 0, 0, 0x00, 0x02, 0, 0, 0xff, 0xff, 0xff, 0xff,
                0xff, 0xff, 0xff, 0xff
            ]
        );
        assert_eq!(OracleRecord::from_le_bytes(&b), r);
    }
}
