//! Tensors across the C ABI (DLPack): element types, descriptions, inputs
//! borrowed from slices, output views and owned DLPack tensors.
//!
//! ```no_run
//! # fn main() -> kiln::Result<()> {
//! # let mut session: kiln::Session = unimplemented!();
//! let x = vec![0.5f32; 1 * 3 * 32 * 32];
//! session.set_input("input", &kiln::TensorRef::new(&x, &[1, 3, 32, 32])?)?;
//! session.run()?;
//! let y: &[f32] = session.output(0)?.as_slice()?;  // borrowed until the next run
//! let owned = session.output_dlpack(0)?;            // a copy that outlives the session
//! # Ok(()) }
//! ```

use std::fmt;
use std::marker::PhantomData;
use std::os::raw::c_void;
use std::ptr::{self, NonNull};

use kiln_sys as sys;

use crate::error::{Code, Error, Result};

/// A DLPack dtype: code (`kDLFloat`, ...), bits and lanes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct DType {
    pub code: u8,
    pub bits: u8,
    pub lanes: u16,
}

impl DType {
    pub const FLOAT16: DType = DType::scalar(sys::kDLFloat, 16);
    pub const FLOAT32: DType = DType::scalar(sys::kDLFloat, 32);
    pub const FLOAT64: DType = DType::scalar(sys::kDLFloat, 64);
    pub const BFLOAT16: DType = DType::scalar(sys::kDLBfloat, 16);
    pub const INT8: DType = DType::scalar(sys::kDLInt, 8);
    pub const INT16: DType = DType::scalar(sys::kDLInt, 16);
    pub const INT32: DType = DType::scalar(sys::kDLInt, 32);
    pub const INT64: DType = DType::scalar(sys::kDLInt, 64);
    pub const UINT8: DType = DType::scalar(sys::kDLUInt, 8);
    pub const UINT16: DType = DType::scalar(sys::kDLUInt, 16);
    pub const UINT32: DType = DType::scalar(sys::kDLUInt, 32);
    pub const UINT64: DType = DType::scalar(sys::kDLUInt, 64);
    pub const BOOL: DType = DType::scalar(sys::kDLBool, 8);

    const fn scalar(code: u8, bits: u8) -> DType {
        DType {
            code,
            bits,
            lanes: 1,
        }
    }

    /// Bytes per element (lanes included).
    pub fn size(self) -> usize {
        (self.bits as usize * self.lanes as usize + 7) / 8
    }

    pub(crate) fn raw(self) -> sys::DLDataType {
        sys::DLDataType {
            code: self.code,
            bits: self.bits,
            lanes: self.lanes,
        }
    }

    pub(crate) fn from_raw(t: sys::DLDataType) -> DType {
        DType {
            code: t.code,
            bits: t.bits,
            lanes: t.lanes,
        }
    }
}

impl fmt::Display for DType {
    /// kiln's names: "float32", "int64", "bool", "bfloat16", "float32x4".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.code {
            sys::kDLBool => write!(f, "bool")?,
            sys::kDLInt => write!(f, "int{}", self.bits)?,
            sys::kDLUInt => write!(f, "uint{}", self.bits)?,
            sys::kDLFloat => write!(f, "float{}", self.bits)?,
            sys::kDLBfloat => write!(f, "bfloat{}", self.bits)?,
            c => write!(f, "code{}_{}", c, self.bits)?,
        }
        if self.lanes != 1 {
            write!(f, "x{}", self.lanes)?;
        }
        Ok(())
    }
}

mod sealed {
    pub trait Sealed {}
}

/// A Rust type whose values are a kiln tensor's elements, bit for bit.
pub trait Element: Copy + sealed::Sealed + 'static {
    const DTYPE: DType;
}

macro_rules! element {
    ($($t:ty => $d:ident),*) => {$(
        impl sealed::Sealed for $t {}
        impl Element for $t { const DTYPE: DType = DType::$d; }
    )*};
}
element!(f32 => FLOAT32, f64 => FLOAT64, i8 => INT8, i16 => INT16, i32 => INT32,
         i64 => INT64, u8 => UINT8, u16 => UINT16, u32 => UINT32, u64 => UINT64);

/// An input's or output's name, shape and dtype. A dim that is not static
/// (a model input whose ONNX dim is symbolic and unbound) is -1.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TensorInfo {
    pub name: String,
    pub shape: Vec<i64>,
    pub dtype: DType,
}

impl TensorInfo {
    /// # Safety
    /// `t.shape` points at `t.ndim` dims (or ndim is 0).
    pub(crate) unsafe fn from_raw(name: String, t: &sys::DLTensor) -> TensorInfo {
        TensorInfo {
            name,
            shape: shape_of(t).to_vec(),
            dtype: DType::from_raw(t.dtype),
        }
    }

    /// The number of elements (0 when a dim is not static).
    pub fn num_elements(&self) -> usize {
        self.shape.iter().map(|&d| d.max(0) as usize).product()
    }
}

/// Something that describes itself as a `DLTensor` for the length of a call:
/// `TensorRef`, `ManagedTensor`, `NpyTensor`, `OutputView`.
///
/// # Safety
/// The returned tensor's `data` and `shape` (and `strides`, if set) must stay
/// valid and unchanged while `self` is borrowed, and `data` must hold the
/// bytes its dtype and shape say.
pub unsafe trait AsDLTensor {
    fn dl_tensor(&self) -> sys::DLTensor;
}

/// An input borrowed from a slice: elements in row-major order and a shape.
/// The session copies it (`Session::set_input`); nothing is kept.
#[derive(Clone, Debug)]
pub struct TensorRef<'a> {
    data: *const u8,
    shape: Vec<i64>,
    dtype: DType,
    _borrow: PhantomData<&'a [u8]>,
}

impl<'a> TensorRef<'a> {
    /// `data` as a tensor of `shape`; INVALID_ARGUMENT when a dim is negative
    /// or the slice's length is not the shape's element count.
    pub fn new<T: Element>(data: &'a [T], shape: &[i64]) -> Result<TensorRef<'a>> {
        check_len(data.len(), shape)?;
        Ok(TensorRef {
            data: data.as_ptr() as *const u8,
            shape: shape.to_vec(),
            dtype: T::DTYPE,
            _borrow: PhantomData,
        })
    }

    /// Raw bytes of any dtype (bfloat16, bool, float16: types Rust lacks).
    pub fn from_bytes(data: &'a [u8], shape: &[i64], dtype: DType) -> Result<TensorRef<'a>> {
        let size = dtype.size().max(1);
        if data.len() % size != 0 {
            return Err(Error::new(
                Code::InvalidArgument,
                format!(
                    "{} bytes are not a whole number of {} elements",
                    data.len(),
                    dtype
                ),
            ));
        }
        check_len(data.len() / size, shape)?;
        Ok(TensorRef {
            data: data.as_ptr(),
            shape: shape.to_vec(),
            dtype,
            _borrow: PhantomData,
        })
    }

    pub fn shape(&self) -> &[i64] {
        &self.shape
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }
}

fn check_len(len: usize, shape: &[i64]) -> Result<()> {
    if let Some(d) = shape.iter().find(|&&d| d < 0) {
        return Err(Error::new(
            Code::InvalidArgument,
            format!("shape {:?}: dim {} < 0", shape, d),
        ));
    }
    let count: i64 = shape.iter().product();
    if count as usize != len {
        return Err(Error::new(
            Code::InvalidArgument,
            format!(
                "a slice of {} elements is not a tensor of shape {:?} ({} elements)",
                len, shape, count
            ),
        ));
    }
    Ok(())
}

unsafe impl AsDLTensor for TensorRef<'_> {
    fn dl_tensor(&self) -> sys::DLTensor {
        sys::DLTensor {
            data: self.data as *mut c_void,
            device: sys::DLDevice {
                device_type: sys::kDLCPU,
                device_id: 0,
            },
            ndim: self.shape.len() as i32,
            dtype: self.dtype.raw(),
            shape: self.shape.as_ptr() as *mut i64,
            strides: ptr::null_mut(),
            byte_offset: 0,
        }
    }
}

/// # Safety
/// `t.shape` points at `t.ndim` dims, or ndim is 0.
pub(crate) unsafe fn shape_of(t: &sys::DLTensor) -> &[i64] {
    if t.ndim <= 0 || t.shape.is_null() {
        &[]
    } else {
        std::slice::from_raw_parts(t.shape, t.ndim as usize)
    }
}

/// The bytes of a compact CPU tensor.
///
/// # Safety
/// `t` describes valid memory that outlives `'t`.
unsafe fn bytes_of<'t>(t: &sys::DLTensor) -> Result<&'t [u8]> {
    let shape = shape_of(t);
    if t.device.device_type != sys::kDLCPU {
        return Err(Error::new(
            Code::InvalidArgument,
            "the tensor is not in CPU memory",
        ));
    }
    if !t.strides.is_null() {
        let strides = std::slice::from_raw_parts(t.strides, shape.len());
        let mut expect = 1i64;
        for i in (0..shape.len()).rev() {
            if shape[i] != 1 && strides[i] != expect {
                return Err(Error::new(
                    Code::Unimplemented,
                    "the tensor is not compact (strided)",
                ));
            }
            expect *= shape[i];
        }
    }
    let n: usize =
        shape.iter().map(|&d| d as usize).product::<usize>() * DType::from_raw(t.dtype).size();
    if n == 0 {
        return Ok(&[]);
    }
    Ok(std::slice::from_raw_parts(
        (t.data as *const u8).add(t.byte_offset as usize),
        n,
    ))
}

/// The elements of a compact CPU tensor as `T` (its dtype must be T's).
///
/// # Safety
/// As `bytes_of`.
unsafe fn slice_of<'t, T: Element>(t: &sys::DLTensor) -> Result<&'t [T]> {
    let dtype = DType::from_raw(t.dtype);
    if dtype != T::DTYPE {
        return Err(Error::new(
            Code::InvalidArgument,
            format!("the tensor holds {}, not {}", dtype, T::DTYPE),
        ));
    }
    let bytes = bytes_of(t)?;
    if bytes.is_empty() {
        return Ok(&[]);
    }
    if (bytes.as_ptr() as usize) % std::mem::align_of::<T>() != 0 {
        return Err(Error::new(
            Code::InvalidArgument,
            "the tensor's data is misaligned",
        ));
    }
    Ok(std::slice::from_raw_parts(
        bytes.as_ptr() as *const T,
        bytes.len() / dtype.size(),
    ))
}

/// The accessors every tensor type shares.
macro_rules! tensor_accessors {
    () => {
        /// The dims.
        pub fn shape(&self) -> &[i64] {
            unsafe { shape_of(self.raw()) }
        }

        pub fn dtype(&self) -> DType {
            DType::from_raw(self.raw().dtype)
        }

        /// The elements as `T`; INVALID_ARGUMENT when the dtype is not T's.
        pub fn as_slice<T: Element>(&self) -> Result<&[T]> {
            unsafe { slice_of(self.raw()) }
        }

        /// The raw bytes (any dtype: bfloat16 comes as its 16-bit patterns).
        pub fn as_bytes(&self) -> Result<&[u8]> {
            unsafe { bytes_of(self.raw()) }
        }

        pub fn to_vec<T: Element>(&self) -> Result<Vec<T>> {
            self.as_slice().map(|s| s.to_vec())
        }
    };
}

/// A read-only view of a session output in session memory
/// (`Session::output`): valid until the session runs again, which the
/// borrow on the session enforces.
pub struct OutputView<'s> {
    pub(crate) t: &'s sys::DLTensor,
}

impl OutputView<'_> {
    fn raw(&self) -> &sys::DLTensor {
        self.t
    }
    tensor_accessors!();
}

unsafe impl AsDLTensor for OutputView<'_> {
    fn dl_tensor(&self) -> sys::DLTensor {
        *self.t
    }
}

/// A tensor owned through a DLPack `DLManagedTensor`: a copy of a session
/// output (`Session::output_dlpack`), which outlives the session and the
/// artifact, or one adopted from another library (`from_raw`). Dropping it
/// calls its deleter.
pub struct ManagedTensor {
    ptr: NonNull<sys::DLManagedTensor>,
}

// Plain data with its own memory; kiln's deleter may run on any thread (and
// `from_raw` requires the same of adopted tensors).
unsafe impl Send for ManagedTensor {}
unsafe impl Sync for ManagedTensor {}

impl ManagedTensor {
    /// Adopts a DLPack tensor: this value now calls its deleter.
    ///
    /// # Safety
    /// `ptr` is a valid `DLManagedTensor` nobody else will release, whose
    /// memory stays valid until its deleter runs, and whose deleter may be
    /// called from any thread.
    pub unsafe fn from_raw(ptr: NonNull<sys::DLManagedTensor>) -> ManagedTensor {
        ManagedTensor { ptr }
    }

    /// Hands the tensor to a DLPack consumer, which must call its deleter.
    pub fn into_raw(self) -> NonNull<sys::DLManagedTensor> {
        let p = self.ptr;
        std::mem::forget(self);
        p
    }

    fn raw(&self) -> &sys::DLTensor {
        unsafe { &self.ptr.as_ref().dl_tensor }
    }
    tensor_accessors!();
}

impl Drop for ManagedTensor {
    fn drop(&mut self) {
        unsafe {
            if let Some(deleter) = self.ptr.as_ref().deleter {
                deleter(self.ptr.as_ptr());
            }
        }
    }
}

unsafe impl AsDLTensor for ManagedTensor {
    fn dl_tensor(&self) -> sys::DLTensor {
        *self.raw()
    }
}

impl fmt::Debug for ManagedTensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "ManagedTensor({}{:?})", self.dtype(), self.shape())
    }
}

impl fmt::Debug for OutputView<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "OutputView({}{:?})", self.dtype(), self.shape())
    }
}

/// A `.npy` file read by the runtime's reader (`kiln_npy_read`: format 1.0 -
/// 3.0, little-endian C order; bfloat16 files hold uint16).
pub struct NpyTensor {
    ptr: NonNull<sys::KilnNpyTensor>,
}

unsafe impl Send for NpyTensor {}
unsafe impl Sync for NpyTensor {}

impl NpyTensor {
    /// Reads `path`; NOT_FOUND when it does not exist, DATA_LOSS when it is
    /// malformed, INVALID_ARGUMENT for a dtype kiln lacks.
    pub fn read(path: impl AsRef<std::path::Path>) -> Result<NpyTensor> {
        let c = crate::error::c_path(path.as_ref())?;
        let mut out = ptr::null_mut();
        unsafe { crate::error::check(sys::kiln_npy_read(c.as_ptr(), &mut out))? };
        NonNull::new(out)
            .map(|ptr| NpyTensor { ptr })
            .ok_or_else(|| Error::new(Code::Internal, "kiln_npy_read returned NULL"))
    }

    /// Writes any CPU tensor as a `.npy` file.
    pub fn write(
        path: impl AsRef<std::path::Path>,
        tensor: &(impl AsDLTensor + ?Sized),
    ) -> Result<()> {
        let c = crate::error::c_path(path.as_ref())?;
        let t = tensor.dl_tensor();
        unsafe { crate::error::check(sys::kiln_npy_write(c.as_ptr(), &t)) }
    }

    fn raw(&self) -> &sys::DLTensor {
        unsafe { &self.ptr.as_ref().tensor }
    }
    tensor_accessors!();
}

impl Drop for NpyTensor {
    fn drop(&mut self) {
        unsafe { sys::kiln_npy_release(self.ptr.as_ptr()) }
    }
}

unsafe impl AsDLTensor for NpyTensor {
    fn dl_tensor(&self) -> sys::DLTensor {
        *self.raw()
    }
}
