//! Agglomerative clustering of speaker embeddings: average linkage on cosine distance,
//! stopped at a distance threshold, or at a forced number of clusters when the caller
//! bounds the speaker count. Pure functions over vectors.

/// L2-normalised copy of `v` (a zero vector stays zero).
pub fn normalized(v: &[f32]) -> Vec<f32> {
    let n = v.iter().map(|x| x * x).sum::<f32>().sqrt();
    if n > 0.0 {
        v.iter().map(|x| x / n).collect()
    } else {
        v.to_vec()
    }
}

pub fn cosine(a: &[f32], b: &[f32]) -> f32 {
    a.iter().zip(b).map(|(x, y)| x * y).sum()
}

/// Clusters the (normalised) `items`; returns a cluster id per item, ids `0..k` dense.
/// Merging goes on while the closest pair is nearer than `threshold` (cosine distance)
/// and more than `min_clusters` remain, and always while more than `max_clusters` remain.
pub fn agglomerate(
    items: &[Vec<f32>],
    threshold: f32,
    min_clusters: usize,
    max_clusters: usize,
) -> Vec<usize> {
    let n = items.len();
    if n == 0 {
        return Vec::new();
    }
    let mut d = vec![0.0f32; n * n];
    for i in 0..n {
        for j in i + 1..n {
            let v = 1.0 - cosine(&items[i], &items[j]);
            d[i * n + j] = v;
            d[j * n + i] = v;
        }
    }
    let mut alive = vec![true; n];
    let mut size = vec![1usize; n];
    let mut parent: Vec<usize> = (0..n).collect();
    let nearest = |d: &[f32], alive: &[bool], i: usize| -> (usize, f32) {
        let mut best = (usize::MAX, f32::INFINITY);
        for (j, &a) in alive.iter().enumerate() {
            if a && j != i && d[i * n + j] < best.1 {
                best = (j, d[i * n + j]);
            }
        }
        best
    };
    let mut nn: Vec<(usize, f32)> = (0..n).map(|i| nearest(&d, &alive, i)).collect();
    let mut count = n;
    while count > 1 {
        let (i, &(j, dist)) = nn
            .iter()
            .enumerate()
            .filter(|(i, _)| alive[*i])
            .min_by(|a, b| a.1 .1.total_cmp(&b.1 .1))
            .expect("at least two clusters alive");
        let merge = (dist <= threshold && count > min_clusters) || count > max_clusters;
        if !merge || j == usize::MAX {
            break;
        }
        // Lance–Williams update for average linkage: j joins i.
        let (si, sj) = (size[i] as f32, size[j] as f32);
        for k in 0..n {
            if alive[k] && k != i && k != j {
                let v = (si * d[k * n + i] + sj * d[k * n + j]) / (si + sj);
                d[k * n + i] = v;
                d[i * n + k] = v;
            }
        }
        alive[j] = false;
        size[i] += size[j];
        parent[j] = i;
        count -= 1;
        for k in 0..n {
            if !alive[k] {
                continue;
            }
            if k == i || nn[k].0 == i || nn[k].0 == j {
                nn[k] = nearest(&d, &alive, k);
            } else if d[k * n + i] < nn[k].1 {
                nn[k] = (i, d[k * n + i]);
            }
        }
    }
    // Dense ids in order of each cluster's first item.
    let root = |mut i: usize| {
        while parent[i] != i {
            i = parent[i];
        }
        i
    };
    let mut ids = std::collections::HashMap::new();
    (0..n)
        .map(|i| {
            let r = root(i);
            let next = ids.len();
            *ids.entry(r).or_insert(next)
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn v(x: f32, y: f32) -> Vec<f32> {
        normalized(&[x, y])
    }

    #[test]
    fn two_directions_make_two_clusters() {
        let items = [
            v(1.0, 0.0),
            v(1.0, 0.1),
            v(0.0, 1.0),
            v(0.1, 1.0),
            v(1.0, 0.05),
        ];
        assert_eq!(agglomerate(&items, 0.3, 1, usize::MAX), vec![0, 0, 1, 1, 0]);
    }

    #[test]
    fn a_speaker_bound_overrides_the_threshold() {
        let items = [v(1.0, 0.0), v(0.0, 1.0), v(-1.0, 0.2)];
        assert_eq!(agglomerate(&items, 0.1, 1, 2).iter().max(), Some(&1));
        assert_eq!(agglomerate(&items, 5.0, 3, usize::MAX), vec![0, 1, 2]);
    }
}
