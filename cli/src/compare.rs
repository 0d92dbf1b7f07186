//! `atome compare`: the q15 integer mode against the float path on a text
//! (docs/Q15.md's quality figures: cross-entropy, argmax agreement, greedy
//! generation), both modes from the library in one process.
use crate::args::CompareArgs;
use crate::container_io::{config_or, read_model};
use crate::engine::{Engine, Plan};
use crate::{load, read_blob, Loaded};
use atome::engine::Engine as _;
use atome::format::{Dims, Model};
use atome::q15::{Q15Layout, Q15Runner};
use std::time::Instant;

/// The q15 runner's memory, owned.
struct Q15Engine {
    i16s: Vec<i16>,
    i32s: Vec<i32>,
    logits: Vec<f32>,
    dims: Dims,
    s: usize,
}

impl Q15Engine {
    fn new(dims: Dims, s: usize) -> Q15Engine {
        let lay = Q15Layout::new(&dims, s);
        Q15Engine { i16s: vec![0; lay.i16s], i32s: vec![0; lay.i32s], logits: vec![0.0; dims.vocab], dims, s }
    }

    fn runner(&mut self) -> Result<Q15Runner<'_>, String> {
        Q15Runner::new(&mut self.i16s, &mut self.i32s, &mut self.logits, &self.dims, self.s).ok_or_else(|| "q15 state refused".to_string())
    }

    fn predict(&mut self, m: &Model, toks: &[i32]) -> Result<Vec<f32>, String> {
        let mut r = self.runner()?;
        r.predict(m, toks).ok_or("q15 predict failed")?;
        Ok(r.logits().to_vec())
    }
}

/// Mean next-token cross-entropy (nats), in binary64.
fn xent(logits: &[Vec<f32>], targets: &[i32]) -> f64 {
    let mut sum = 0.0;
    for (l, &t) in logits.iter().zip(targets) {
        let m = l.iter().fold(f64::NEG_INFINITY, |a, &x| a.max(x as f64));
        let lse = l.iter().map(|&x| (x as f64 - m).exp()).sum::<f64>().ln();
        sum += lse - (l[t as usize] as f64 - m);
    }
    sum / logits.len() as f64
}

/// Index of the first largest value.
fn argmax(v: &[f32]) -> usize {
    let mut b = 0;
    for (i, &x) in v.iter().enumerate() {
        if x > v[b] {
            b = i;
        }
    }
    b
}

fn cosine(a: &[f32], b: &[f32]) -> f64 {
    let (mut ab, mut aa, mut bb) = (0.0f64, 0.0f64, 0.0f64);
    for (&x, &y) in a.iter().zip(b) {
        let (x, y) = (x as f64, y as f64);
        ab += x * y;
        aa += x * x;
        bb += y * y;
    }
    ab / (aa.sqrt() * bb.sqrt())
}

pub fn cmd_compare(a: &CompareArgs) -> Result<(), String> {
    let (path, b, boxed) = read_model(&a.model.blob)?;
    let (_, dims, how, loaded) = load(&b, &a.model, config_or(a.model.config.config, &boxed))?;
    let model = match loaded {
        Loaded::Lm(m) => m,
        Loaded::Clf(_) => return Err("compare needs a language-model blob, not a classifier".into()),
    };
    let (tname, text) = read_blob(&a.text)?;
    let t = a.window;
    let toks: Vec<i32> = text.iter().map(|&x| x as i32 % dims.vocab as i32).collect();
    let offs: Vec<usize> = (0..a.windows).map(|i| i * a.stride).filter(|&o| o + t < toks.len()).collect();
    if offs.is_empty() {
        return Err(format!("{tname}: shorter than one window of {t} bytes plus its target"));
    }
    outln!("blob {path}: {} ({how}); text {tname}: {} bytes", crate::blob::dims_long(&dims), toks.len());

    let mut fe = Engine::new(dims, t, Plan::Cached);
    let mut qe = Q15Engine::new(dims, t);
    let (mut lf, mut lq, mut tg) = (Vec::new(), Vec::new(), Vec::new());
    let (mut tf, mut tq) = (0.0f64, 0.0f64);
    for &o in &offs {
        for p in 1..=t {
            let pre = &toks[o..o + p];
            let t0 = Instant::now();
            fe.predict(&model, pre).ok_or("float predict failed")?;
            tf += t0.elapsed().as_secs_f64();
            lf.push(fe.logits.clone());
            let t0 = Instant::now();
            lq.push(qe.predict(&model, pre)?);
            tq += t0.elapsed().as_secs_f64();
            tg.push(toks[o + p]);
        }
    }
    let n = lf.len();
    let (cf, cq) = (xent(&lf, &tg), xent(&lq, &tg));
    let agree = lf.iter().zip(&lq).filter(|(f, q)| argmax(f) == argmax(q)).count();
    let cos: Vec<f64> = lf.iter().zip(&lq).map(|(f, q)| cosine(f, q)).collect();
    let cmin = cos.iter().cloned().fold(f64::INFINITY, f64::min);
    outln!("windows {} x {t} bytes every {} bytes: {n} positions scored", offs.len(), a.stride);
    outln!("cross-entropy float {cf:.5}  q15 {cq:.5}  relative {:+.3}%", 100.0 * (cq / cf - 1.0));
    outln!("argmax agreement {agree}/{n} = {:.2}%", 100.0 * agree as f64 / n as f64);
    outln!("logit cosine mean {:.6}  min {cmin:.6}", cos.iter().sum::<f64>() / n as f64);
    outln!("(float cached {tf:.1} s, q15 lean {tq:.1} s, predict on every prefix)");

    let pl = a.prompt_len;
    let (mut eq_all, mut full) = (0, 0);
    let mut per = Vec::new();
    for i in 0..a.prompts {
        let o = offs[(i * offs.len()) / a.prompts] + 1000;
        let Some(prompt) = toks.get(o..o + pl) else { continue };
        let s = pl + a.gen;
        let mut gf = vec![0i32; a.gen];
        let mut f = Engine::new(dims, s, Plan::Cached);
        let nf = f.generate(&model, prompt, &mut gf).ok_or("float generate failed")?;
        let mut q = Q15Engine::new(dims, s);
        let mut gq = vec![0i32; a.gen];
        let nq = q.runner()?.generate_greedy(&model, prompt, &mut gq);
        let (gf, gq) = (&gf[..nf], &gq[..nq]);
        let same = gf.iter().zip(gq).filter(|(x, y)| x == y).count();
        let pre = gf.iter().zip(gq).take_while(|(x, y)| x == y).count();
        outln!("prompt {i} (offset {o}): {same}/{} tokens equal, common prefix {pre}", gf.len());
        eq_all += same;
        full += usize::from(same == a.gen && nq == a.gen);
        per.push(same.to_string());
    }
    outln!("greedy: equal tokens {eq_all}/{}, per prompt [{}]; prompts fully equal {full}/{}", a.gen * per.len(), per.join(", "), per.len());
    Ok(())
}
