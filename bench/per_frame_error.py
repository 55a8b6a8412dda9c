#!/usr/bin/env python3
# Per-frame camera errors of a model against a TUM ground truth, after a Sim(3) alignment of the
# camera centres (Umeyama): where along a sequence a model goes wrong (reconstruct_eval gives the
# totals). Needs numpy.
#   bench/per_frame_error.py OUT/sparse/0/trajectory.txt groundtruth.txt
#   bench/per_frame_error.py COLMAP_TXT/images.txt groundtruth.txt rgb.txt   (a COLMAP text model)
import sys, numpy as np
def quat2R(q):  # qx qy qz qw
    x,y,z,w=q; return np.array([[1-2*(y*y+z*z),2*(x*y-z*w),2*(x*z+y*w)],[2*(x*y+z*w),1-2*(x*x+z*z),2*(y*z-x*w)],[2*(x*z-y*w),2*(y*z+x*w),1-2*(x*x+y*y)]])
def readtum(p):
    d={}
    for l in open(p):
        if l.startswith('#') or not l.strip(): continue
        v=[float(a) for a in l.split()]; d[v[0]]=(np.array(v[1:4]),quat2R(v[4:8]))
    return d
def colmap(images_txt, rgb_list):
    t={}
    for l in open(rgb_list):
        if l.startswith('#') or not l.strip(): continue
        s,n=l.split()[:2]; t[n.split('/')[-1]]=float(s)
    d={}; lines=[l for l in open(images_txt) if not l.startswith('#')]
    for i in range(0,len(lines),2):
        v=lines[i].split(); 
        if len(v)<10: continue
        qw,qx,qy,qz=map(float,v[1:5]); tr=np.array(list(map(float,v[5:8])))
        R=quat2R([qx,qy,qz,qw]); C=-R.T@tr; d[t[v[9].split('/')[-1]]]=(C,R.T)
    return d
est = readtum(sys.argv[1]) if len(sys.argv)==3 else colmap(sys.argv[1], sys.argv[3])
gt=readtum(sys.argv[2]); gk=np.array(sorted(gt))
pairs=[]
for s in sorted(est):
    j=np.argmin(abs(gk-s))
    if abs(gk[j]-s)<0.02: pairs.append((s,est[s],gt[gk[j]]))
A=np.array([p[1][0] for p in pairs]).T; B=np.array([p[2][0] for p in pairs]).T
ma,mb=A.mean(1,keepdims=True),B.mean(1,keepdims=True); a,b=A-ma,B-mb
U,S,Vt=np.linalg.svd(b@a.T/A.shape[1]); D=np.eye(3); D[2,2]=np.sign(np.linalg.det(U@Vt))
R=U@D@Vt; s=np.trace(np.diag(S)@D)/((a**2).sum()/A.shape[1]); t=mb-s*R@ma
err=np.linalg.norm(s*R@A+t-B,axis=0)
# rotation error per frame, after the alignment rotation
rerr=[np.degrees(np.arccos(np.clip((np.trace((R@p[1][1]).T@p[2][1])-1)/2,-1,1))) for p in pairs]
print('n',len(pairs),'ATE rmse mm %.2f'%(1000*np.sqrt((err**2).mean())), 'rot rmse %.3f'%np.sqrt(np.mean(np.square(rerr))))
for i,p in enumerate(pairs):
    print('%3d %.3f pos %6.1f mm rot %6.2f deg'%(i,p[0]-pairs[0][0],1000*err[i],rerr[i]))
