//! The messages between the supervisor and its worker process, over the
//! worker's stdin and stdout: each frame is a little-endian u32 length and
//! that many bytes of postcard (compact binary serde; audio stays f32).

use std::io::{self, Read, Write};
use std::path::PathBuf;

use serde::de::DeserializeOwned;
use serde::{Deserialize, Serialize};

use super::{Compute, EngineError, ModelInfo, RunParams, Utterance};

/// Parent → worker. `id` names a request for its reply and for `Cancel`;
/// `seq` counts runs over the parent's whole life (fault injection).
#[derive(Debug, Serialize, Deserialize)]
pub enum ToWorker {
    /// Always the first message.
    Load {
        model_path: PathBuf,
        threads: super::cpu::Threads,
        compute: Compute,
        cpu_only: bool,
    },
    Run {
        id: u64,
        seq: u64,
        params: RunParams,
        pcms: Vec<Vec<f32>>,
    },
    StreamBegin {
        id: u64,
        seq: u64,
        params: RunParams,
    },
    StreamFeed(Vec<f32>),
    StreamFinish,
    StreamAbort,
    /// Cancel request `id` if it is the one running (a late cancel is ignored).
    Cancel {
        id: u64,
    },
    /// Instead of `Load`: only say what this model file is, then exit.
    Probe {
        model_path: PathBuf,
    },
    /// Instead of `Load`: serve the voice detector in `model_path`.
    LoadVad {
        model_path: PathBuf,
    },
    /// Score 16 kHz audio; `seq` counts the detector's calls over the
    /// parent's life (fault injection).
    VadFeed {
        seq: u64,
        pcm: Vec<f32>,
    },
    /// Score the partial last frame and start a fresh stream.
    VadFlush {
        seq: u64,
    },
}

/// Worker → parent.
#[derive(Debug, Serialize, Deserialize)]
pub enum FromWorker {
    Ready {
        info: ModelInfo,
        backend: String,
    },
    Probed(Result<ModelInfo, EngineError>),
    LoadFailed(EngineError),
    Reply {
        id: u64,
        result: Result<Vec<Utterance>, EngineError>,
    },
    Partial {
        id: u64,
        committed: String,
        tentative: String,
    },
    Final {
        id: u64,
        result: Result<Utterance, EngineError>,
    },
    /// The voice detector is loaded.
    VadReady,
    /// One speech probability per completed 32 ms frame.
    VadScores(Result<Vec<f32>, EngineError>),
}

/// A frame longer than this is a corrupt stream, not a message (an hour of
/// audio is 230 MB).
const MAX_FRAME: usize = 1 << 30;

pub fn write_frame(out: &mut impl Write, message: &impl Serialize) -> io::Result<()> {
    let bytes = postcard::to_stdvec(message).map_err(io::Error::other)?;
    out.write_all(&(bytes.len() as u32).to_le_bytes())?;
    out.write_all(&bytes)?;
    out.flush()
}

/// The next message; `None` at a clean end of stream (the other side closed).
pub fn read_frame<T: DeserializeOwned>(input: &mut impl Read) -> io::Result<Option<T>> {
    let mut len = [0u8; 4];
    match input.read_exact(&mut len) {
        Ok(()) => {}
        Err(e) if e.kind() == io::ErrorKind::UnexpectedEof => return Ok(None),
        Err(e) => return Err(e),
    }
    let len = u32::from_le_bytes(len) as usize;
    if len > MAX_FRAME {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            format!("engine frame of {len} bytes"),
        ));
    }
    let mut bytes = vec![0u8; len];
    input.read_exact(&mut bytes)?;
    postcard::from_bytes(&bytes)
        .map(Some)
        .map_err(|e| io::Error::new(io::ErrorKind::InvalidData, e))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn messages_survive_the_round_trip_in_order() {
        let mut pipe = Vec::new();
        let audio = vec![vec![0.25f32, -1.0, 3.5e-7], vec![]];
        write_frame(
            &mut pipe,
            &ToWorker::Run {
                id: 7,
                seq: 3,
                params: RunParams {
                    prompt: Some("earlier".into()),
                    ..Default::default()
                },
                pcms: audio.clone(),
            },
        )
        .unwrap();
        write_frame(&mut pipe, &ToWorker::Cancel { id: 7 }).unwrap();
        let mut input = pipe.as_slice();
        match read_frame::<ToWorker>(&mut input).unwrap() {
            Some(ToWorker::Run {
                id,
                seq,
                params,
                pcms,
            }) => {
                assert_eq!((id, seq), (7, 3));
                assert_eq!(params.prompt.as_deref(), Some("earlier"));
                assert_eq!(pcms, audio, "samples are bit-exact");
            }
            other => panic!("got {other:?}"),
        }
        assert!(matches!(
            read_frame::<ToWorker>(&mut input).unwrap(),
            Some(ToWorker::Cancel { id: 7 })
        ));
        assert!(
            read_frame::<ToWorker>(&mut input).unwrap().is_none(),
            "clean end"
        );
    }

    #[test]
    fn a_truncated_or_oversized_frame_is_an_error_not_a_message() {
        let mut pipe = Vec::new();
        write_frame(&mut pipe, &ToWorker::StreamFinish).unwrap();
        pipe.truncate(pipe.len() - 1);
        pipe.push(0xff); // garbage variant tag
        assert!(read_frame::<ToWorker>(&mut pipe.as_slice()).is_err());
        let huge = (u32::MAX).to_le_bytes();
        assert!(read_frame::<ToWorker>(&mut huge.as_slice()).is_err());
        let cut = [5u8, 0, 0, 0, 1];
        assert!(read_frame::<ToWorker>(&mut cut.as_slice()).is_err());
    }
}
